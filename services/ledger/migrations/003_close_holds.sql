-- close_holds() lives in repeatable/close_holds.sql, applied after the migrations, so its current
-- logic is read in one place.
SELECT 1;
