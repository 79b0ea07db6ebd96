DROP TABLE counters; CREATE TABLE counters(case_id, name, value);
;INSERT INTO counters VALUES (3, 'ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ1); ª¶/
ºªA urnal?_mL; INSERÍ 	NTO gÿÿtime_median_ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ ÿÿÿ1); ª¶/
ºªA urnal?_mL; INSERÍ  SENTO gÿÿtime_median_ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ ÿÿÿ1); ª¶/
ºªA urnal?_mL; INSERÍ  SET 	NTO cÿÿÿÿÿÿÿÿÿÿÿÿounterÿs VALUES (1/ ÿÿÿÿÿÿÿÿÿÿÿÿ TEMP, 1); ª¶/
ºªA urnal?_mL; INSERÍ  SET 	NTO cÿÿÿÿÿÿÿÿÿÿÿÿounterÿs VALUES (1/ ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ³ÿÿrÿsÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿuuuuuuu VALUES (1, x''xCTRAEE TEMP, 1); ª¶/
ºªA urÿÿÿÿÿÿÿÿÿÿÿÿÿÿøÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu VALUES (1, x''xCTRAE`E Tÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿuuuuuuÿ	uuuuuuuuuuuuuuuuuuuuuuuu VALUES (0, x'%'xCTRAEE TEMP, 1
















































nal?_mL; INSERÍ  SET 	NTO cÿÿÿÿÿÿÿÿÿÿÿÿounterÿs VALUESÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu VALUES )2, x''xCTRAE`E TEMP, 1); ª¶/
ºªA urnal?_mL; INSERÍ 	NTO cÿÿÿÿÿÿÿÿÿÿÿÿounterÿs VALUEsplits AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT runs0.* (1/ ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿrÿsÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿEMP, 1); ª¶/
ºªA urnal?ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿuuuuuuu VALUES (1, x''xCTRAEE TEMP, 1); ª¶/
ºªA urÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿþÿÿÿÿÿÿÿÿ0, x''xCTRAE`E Tÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿuuuuuuÿ	uuuuuuuuÿÿÿÿ~ÿÿÿuuuuuuuu VALUES (0, x''xCTRAEE TEMP, 1); ª¶/
ºªA urnal?_mL; INSERÍ  SET 	NTO cÿÿÿÿÿÿÿÿÿÿÿÿounterÿs VALUES (0/ ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ³ÿÿrÿsÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿRAE`E TEMP, 1); ª¶/
ºªA urnal?_mL; INSERÍ 	NTO cÿÿÿÿÿÿÿÿÿÿÿÿounterÿs VALUES runs AS WITH RECuuuuuuuuuuuuuuuuuuuuuuuuuuuu VALUE SELECT x+1 FUES ( S/
ºªA urnal?_mL; INSERÍ 	NTO cÿÿÿÿÿÿÿÿÿÿÿÿounterÿs VALUES (1/ x''xCTRAEE TEMP, 1); ª¶/
ºª ', 1)