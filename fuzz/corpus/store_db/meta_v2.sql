UPDATE meta SET value = '2' WHERE key = 'schema_version';
