"""Writes a tiny random-weight Llama model, as a GGUF file llama.cpp's llama-server serves, to the path given.

No model can be fetched here, and none is needed to test what llmgw does with a real engine: the engine
must load a model, stream tokens and count them, not say anything sensible. The model: 2 layers, 64-wide,
a 1,024-token byte-level BPE vocabulary trained here on made-up ASCII words, ChatML's chat template.
Random weights emit any token; a token of one high byte alone is invalid UTF-8, which llama-server
answers with a 500, so the merges are learned from ASCII only and those 128 tokens are control tokens
(never written out). The same seed makes the same file.
"""

import json
import random
import sys

import numpy as np
from gguf import GGUFWriter, LlamaFileType, TokenType
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

VOCAB_SIZE = 1024
EMBED, LAYERS, HEADS, FEED_FORWARD, CONTEXT = 64, 2, 4, 128, 32768
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def ascii_texts(count: int):
    """Sentences of made-up lowercase words: ASCII only, so no merge holds a high byte."""
    rng = random.Random(1)
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "an", "el", "or", "us", "th", "st", "er"]
    for _ in range(count):
        words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(30)]
        yield " ".join(words) + "."


def high_byte_tokens() -> set:
    """The byte-level alphabet's characters that stand for one byte of 128 or more (GPT-2's mapping)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    mapping, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            mapping[byte] = chr(byte)
        else:
            mapping[byte] = chr(256 + extra)
            extra += 1
    return {mapping[byte] for byte in range(128, 256)}


def train_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(ascii_texts(2000), trainer=trainer)
    return tokenizer


def main(path: str) -> None:
    tokenizer = train_tokenizer()
    spec = json.loads(tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    tokens = [token for token, _ in sorted(vocab.items(), key=lambda item: item[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    high = high_byte_tokens()
    types = [
        TokenType.CONTROL if token in SPECIAL or token in high else TokenType.NORMAL for token in tokens
    ]

    writer = GGUFWriter(path, "llama")
    writer.add_name("llmgw-tiny-random")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBED // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab["<|endoftext|>"])
    writer.add_eos_token_id(vocab["<|im_end|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    rng = np.random.default_rng(1)
    weight = lambda *shape: (rng.standard_normal(shape) * 0.02).astype(np.float32)  # noqa: E731
    ones = lambda n: np.ones(n, dtype=np.float32)  # noqa: E731
    writer.add_tensor("token_embd.weight", weight(len(tokens), EMBED))
    writer.add_tensor("output_norm.weight", ones(EMBED))
    writer.add_tensor("output.weight", weight(len(tokens), EMBED))
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", ones(EMBED))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{block}.{name}.weight", weight(EMBED, EMBED))
        writer.add_tensor(f"{block}.ffn_norm.weight", ones(EMBED))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(FEED_FORWARD, EMBED))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(FEED_FORWARD, EMBED))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(EMBED, FEED_FORWARD))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make-tiny-gguf.py FILE.gguf")
    main(sys.argv[1])
