ALTER TABLE kernels RENAME COLUMN name TO kname;
