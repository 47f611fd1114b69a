-- admit_on_counter() lives in repeatable/admit_on_counter.sql, applied after the migrations, so its
-- current logic is read in one place.
SELECT 1;
