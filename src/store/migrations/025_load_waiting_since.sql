-- Since when a source's requests have waited without a break, when some wait and the source says
-- (gateways do): the policy tells a new queue (a new burst) from the same one piling up. Null when none
-- wait or the source did not say.
alter table load_reports add column waiting_since timestamptz;
