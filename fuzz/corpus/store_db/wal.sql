PRAGMA journal_mode=WAL; INSERT INTO counters VALUES (1, 'x', 1);
