PRAGMA writable_schema=1; UPDATE sqlite_master SET sql = replace(sql, 'time_median_s REAL NOT NULL', 'time_median_s TEXT') WHERE name = 'cases';
