UPDATE cases SET reps = 'many', time_median_s = x'00ff', op_spec = NULL WHERE id = 2;
