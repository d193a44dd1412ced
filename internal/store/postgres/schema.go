package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// formatVersion is the table layout below; Open refuses a schema holding
// another.
const formatVersion = 1

// The layout, in the schema named by Options.Schema:
//
//	kv(k bytea primary key, v bytea, ver bigint)
//	    one row per key; v NULL is a tombstone: the key was deleted at ver.
//	    bytea compares bytewise (memcmp, then length), which is the store's
//	    key order: no collation is involved.
//	kv_tombstones: index on kv(ver) where v is null, for pruning.
//	meta(id = 1, format, ver, floor)
//	    ver: the latest commit version (one per commit group with writes);
//	    floor: tombstones at or below it may be pruned, so a snapshot below
//	    it cannot be validated. Every commit transaction updates this row
//	    first: that is what serializes committers.
//	commits(ver primary key, token)
//	    one row per commit group: its random token, so a committer whose
//	    connection broke during COMMIT can find out whether it took effect.
const ddl = `
CREATE SCHEMA IF NOT EXISTS %[1]s;
CREATE TABLE IF NOT EXISTS %[1]s.kv (
	k   bytea PRIMARY KEY,
	v   bytea,
	ver bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS kv_tombstones ON %[1]s.kv (ver) WHERE v IS NULL;
CREATE TABLE IF NOT EXISTS %[1]s.meta (
	id     int PRIMARY KEY CHECK (id = 1),
	format int NOT NULL,
	ver    bigint NOT NULL,
	floor  bigint NOT NULL
);
INSERT INTO %[1]s.meta (id, format, ver, floor) VALUES (1, %[2]d, 0, 0) ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS %[1]s.commits (
	ver   bigint PRIMARY KEY,
	token bytea NOT NULL
);`

// queries holds the statements, with the schema name filled in.
type queries struct {
	get, scan, scanTo   string
	snapshot, validate  string
	bump, apply, record string
	prune, outcome      string
	lock, unlock        string
}

func newQueries(schema string) queries {
	s := pgx.Identifier{schema}.Sanitize()
	f := func(q string) string { return strings.ReplaceAll(q, "$S", s) }
	// validate returns the floor and a key of the read set (points $2,
	// spans [$3[i], $4[i])) written after snapshot version $1, or NULL.
	// LATERAL with LIMIT 1 makes each span one index range probe.
	validate := `
SELECT m.floor, c.k IS NOT NULL, c.k
FROM $S.meta m LEFT JOIN LATERAL (
	(SELECT k FROM $S.kv WHERE k = ANY($2::bytea[]) AND ver > $1 LIMIT 1)
	UNION ALL
	(SELECT x.k FROM unnest($3::bytea[], $4::bytea[]) AS s(lo, hi)
		CROSS JOIN LATERAL (SELECT k FROM $S.kv WHERE k >= s.lo AND k < s.hi AND ver > $1 LIMIT 1) x
		LIMIT 1)
	LIMIT 1
) c ON true
WHERE m.id = 1`
	return queries{
		get:      f(`SELECT v FROM $S.kv WHERE k = $1 AND v IS NOT NULL`),
		scan:     f(`SELECT k, v FROM $S.kv WHERE k >= $1 AND v IS NOT NULL ORDER BY k LIMIT $2`),
		scanTo:   f(`SELECT k, v FROM $S.kv WHERE k >= $1 AND k < $2 AND v IS NOT NULL ORDER BY k LIMIT $3`),
		snapshot: f(`SELECT ver, floor FROM $S.meta WHERE id = 1`),
		validate: f(validate),
		bump:     f(`UPDATE $S.meta SET ver = ver + 1 WHERE id = 1 RETURNING ver, floor`),
		apply: f(`INSERT INTO $S.kv (k, v, ver) SELECT w.k, w.v, $3 FROM unnest($1::bytea[], $2::bytea[]) AS w(k, v)
ON CONFLICT (k) DO UPDATE SET v = excluded.v, ver = excluded.ver`),
		record:  f(`INSERT INTO $S.commits (ver, token) VALUES ($1, $2)`),
		prune:   f(`WITH t AS (DELETE FROM $S.kv WHERE v IS NULL AND ver <= $1), c AS (DELETE FROM $S.commits WHERE ver <= $1) UPDATE $S.meta SET floor = $1 WHERE id = 1`),
		outcome: f(`SELECT ver, floor FROM $S.meta WHERE id = 1 FOR UPDATE`),
		lock:    `SELECT pg_advisory_lock($1)`,
		unlock:  `SELECT pg_advisory_unlock($1)`,
	}
}

// lockKey is the advisory lock of a schema: every committer on it holds it
// while its commit transaction runs.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("weft/store/postgres:" + schema))
	return int64(h.Sum64())
}

var errFormat = errors.New("store/postgres: schema holds another table format")

// createSchema creates the tables if missing and checks the format. The
// advisory transaction lock keeps concurrent Opens from racing on CREATE ...
// IF NOT EXISTS, which PostgreSQL does not make atomic.
func createSchema(ctx context.Context, conn *pgx.Conn, schema string, advisory bool) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if advisory {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(schema)); err != nil {
			return err
		}
	}
	s := pgx.Identifier{schema}.Sanitize()
	// Simple protocol: several statements in one round trip.
	if _, err := tx.Exec(ctx, fmt.Sprintf(ddl, s, formatVersion), pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	var format int
	if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT format FROM %s.meta WHERE id = 1`, s)).Scan(&format); err != nil {
		return err
	}
	if format != formatVersion {
		return fmt.Errorf("%w: %s has format %d, this build reads %d", errFormat, schema, format, formatVersion)
	}
	return tx.Commit(ctx)
}
