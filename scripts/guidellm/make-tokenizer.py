"""Writes a small byte-level BPE tokenizer, as a transformers tokenizer folder, to the path given.

GuideLLM needs a tokenizer to size its synthetic prompts, and would fetch one from the Hugging Face hub,
which this project does not reach. This one is trained here, offline and deterministically, on the
Faker text GuideLLM makes its prompts of, so that its token counts are those of a real BPE vocabulary.
"""

import sys

from faker import Faker
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

VOCAB_SIZE = 2000
TRAINING_TEXTS = 2000


def faker_texts(count: int):
    faker = Faker()
    faker.seed_instance(1)
    for _ in range(count):
        yield faker.text(max_nb_chars=1000)


def main(folder: str) -> None:
    tokenizer = Tokenizer(models.BPE())
    # Byte-level: every text encodes, and decoding gives the text back.
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(faker_texts(TRAINING_TEXTS), trainer=trainer)
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    ).save_pretrained(folder)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make-tokenizer.py FOLDER")
    main(sys.argv[1])
