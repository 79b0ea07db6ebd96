DROP TABLE counters; CREATE TABLE counters(case_id, name, value);
