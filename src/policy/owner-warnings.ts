import type { Model } from '../domain/model.ts';
import type { Snapshot } from '../domain/snapshot.ts';
import { limitSentence } from './explain.ts';
import { blockingLimit } from './limits.ts';
import { nextProfile } from './profiles.ts';
import { buildView } from './view.ts';

/**
 * What to tell whoever gives a model its owner (or its spec): the limit on the owner's chain that stops
 * the model's next replica, counting the replicas it already runs under that owner. The change is made
 * all the same: a limit stops no replica that runs, only new ones. `model` is the model as it will be.
 */
export function ownerWarnings(snapshot: Snapshot, model: Model): string[] {
  const view = buildView({
    ...snapshot,
    models: [...snapshot.models.filter((other) => other.name !== model.name), model],
  });
  const next = nextProfile(model, view.measurementsOf(model.name));
  const block = next && blockingLimit(view, model.owner, next.resources);
  if (!next || !block) return [];
  return [
    `${limitSentence(view, block, next.resources)}, so ${model.name} starts no new replica of ${next.name} under this owner`,
  ];
}
