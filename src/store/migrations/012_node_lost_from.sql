-- A lost node comes back as it was when it was lost: ready, or cordoned if an operator had cordoned it.
alter table nodes add column lost_from text check (lost_from in ('ready', 'cordoned'));
