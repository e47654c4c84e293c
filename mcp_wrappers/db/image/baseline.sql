-- The database's baseline: a copy of every table at READY, and the function the
-- grader calls after the episode to see what changed (grader/changes.py).
-- Run as postgres by egym-init. The schema is closed to everyone but superusers and
-- the read-only grader (pg_read_all_data), so the agent can neither read nor change it.
DROP SCHEMA IF EXISTS egym_baseline CASCADE;
CREATE SCHEMA egym_baseline;
REVOKE ALL ON SCHEMA egym_baseline FROM PUBLIC;

DO $copy$
DECLARE t text;
BEGIN
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') LOOP
    EXECUTE format('CREATE TABLE egym_baseline.%I AS TABLE public.%I', t, t);
  END LOOP;
END
$copy$;

-- One row per row that differs: change is inserted / changed / deleted (tables with a
-- primary key; `columns` names what changed) or added / removed (tables without one,
-- compared as multisets). A table the agent dropped shows every row deleted.
-- search_path is pinned so nothing the agent defines in public can stand in for
-- the functions and operators used here.
CREATE FUNCTION egym_baseline.changes()
RETURNS TABLE (tbl text, change text, row_key jsonb, columns text[])
LANGUAGE plpgsql STABLE SET search_path = pg_catalog AS $fn$
DECLARE
  t text;
  live regclass;
  key_expr text;
BEGIN
  FOR t IN SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'egym_baseline' AND c.relkind = 'r' ORDER BY 1 LOOP
    live := to_regclass(format('public.%I', t));
    IF live IS NULL THEN
      RETURN QUERY EXECUTE format(
        'SELECT %L::text, ''deleted''::text, to_jsonb(b), NULL::text[] FROM egym_baseline.%I b', t, t);
      CONTINUE;
    END IF;
    SELECT 'jsonb_build_object(' || string_agg(format('%L, x.%I', a.attname, a.attname), ', ' ORDER BY k.ord) || ')'
      INTO key_expr
      FROM pg_index i
      CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
     WHERE i.indrelid = live AND i.indisprimary;
    IF key_expr IS NULL THEN
      RETURN QUERY EXECUTE format($q$
        SELECT %1$L::text, 'removed'::text, r, NULL::text[]
          FROM (SELECT to_jsonb(x) FROM egym_baseline.%1$I x EXCEPT ALL SELECT to_jsonb(x) FROM public.%1$I x) s(r)
        UNION ALL
        SELECT %1$L::text, 'added'::text, r, NULL::text[]
          FROM (SELECT to_jsonb(x) FROM public.%1$I x EXCEPT ALL SELECT to_jsonb(x) FROM egym_baseline.%1$I x) s(r)
      $q$, t);
    ELSE
      RETURN QUERY EXECUTE format($q$
        SELECT %1$L::text,
               CASE WHEN a.k IS NULL THEN 'deleted' WHEN b.k IS NULL THEN 'inserted' ELSE 'changed' END,
               coalesce(b.k, a.k),
               CASE WHEN a.k IS NOT NULL AND b.k IS NOT NULL THEN
                 ARRAY(SELECT e.key FROM jsonb_each(b.r) e WHERE (a.r -> e.key) IS DISTINCT FROM e.value ORDER BY 1)
               END
          FROM (SELECT %2$s AS k, to_jsonb(x) AS r FROM egym_baseline.%1$I x) b
          FULL JOIN (SELECT %2$s AS k, to_jsonb(x) AS r FROM public.%1$I x) a ON a.k = b.k
         WHERE a.k IS NULL OR b.k IS NULL OR a.r <> b.r
      $q$, t, key_expr);
    END IF;
  END LOOP;
END
$fn$;
