DROP TABLE counters; CREATE VIRTUAL TABLE counters USING fts4(case_id, name, value);
