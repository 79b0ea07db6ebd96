PRAGMA writable_schema=1; UPDATE sqlite_master SET sql = 'CREATE INDEX cases_class ON cases(impl, split)' WHERE name = 'cases_class';
