-- Every live reading asks which models failed a start lately (store/replicas.ts backedOffModels): the
-- profiles backed off after it are what a sibling sees of the model, so that nobody leaves room to a
-- model that cannot take it (docs/policy.md "Fair shares from the first placement"). Failed replicas
-- are few, so a partial index answers that without reading every replica changed in the window.
create index replicas_failed on replicas (updated_at) where state = 'failed';
