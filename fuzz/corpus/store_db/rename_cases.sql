ALTER TABLE cases RENAME TO cases_x;
