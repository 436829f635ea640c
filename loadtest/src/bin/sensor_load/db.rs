//! PostgreSQL as the runs read it directly: a garden's schema, COPY, row counts, and the
//! server's work (statistics and the CPU time of this database's backends from /proc).

use sqlx::{AssertSqlSafe, Connection, PgConnection, PgPool, Row};
use uuid::Uuid;

pub fn url() -> Result<String, String> {
    std::env::var("DATABASE_URL").map_err(|_| "DATABASE_URL is not set".to_owned())
}

pub async fn pool() -> Result<PgPool, String> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .connect(&url()?)
        .await
        .map_err(|e| format!("connect: {e}"))
}

pub async fn schema_of(pool: &PgPool, slug: &str) -> Result<String, String> {
    sqlx::query_scalar("SELECT schema_name FROM platform.tenants WHERE slug = $1")
        .bind(slug)
        .fetch_one(pool)
        .await
        .map_err(|e| format!("schema of {slug}: {e}"))
}

/// `COPY schema.sensor_readings FROM STDIN` of `rows` (text format, one reading a line) on a
/// connection of its own; the rows the server took.
pub async fn copy_readings(schema: &str, rows: &[u8]) -> Result<u64, String> {
    let mut conn = PgConnection::connect(&url()?)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let mut copy = conn
        .copy_in_raw(&format!(
            "COPY {schema}.sensor_readings (sensor_id, measured_at, value) FROM STDIN"
        ))
        .await
        .map_err(|e| format!("COPY: {e}"))?;
    for chunk in rows.chunks(1 << 20) {
        copy.send(chunk).await.map_err(|e| format!("COPY: {e}"))?;
    }
    let n = copy.finish().await.map_err(|e| format!("COPY: {e}"))?;
    conn.close().await.ok();
    Ok(n)
}

/// Raw readings and the readings counted in the hourly roll-ups, of each sensor.
pub async fn stored(
    pool: &PgPool,
    schema: &str,
    sensors: &[Uuid],
) -> Result<Vec<(Uuid, i64, i64)>, String> {
    let rows = sqlx::query(AssertSqlSafe(format!(
        "SELECT s.id, (SELECT count(*) FROM {schema}.sensor_readings r WHERE r.sensor_id = s.id), \
                (SELECT coalesce(sum(count), 0)::bigint FROM {schema}.sensor_readings_hourly h \
                  WHERE h.sensor_id = s.id) \
         FROM unnest($1::uuid[]) AS s(id)"
    )))
    .bind(sensors)
    .fetch_all(pool)
    .await
    .map_err(|e| format!("counting readings: {e}"))?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(|e| e.to_string())
}

/// The work PostgreSQL did for this database between two readings.
#[derive(Debug, Clone, Default)]
pub struct Work {
    pub xacts: i64,
    pub blks_hit: i64,
    pub blks_read: i64,
    pub tup_returned: i64,
    pub tup_fetched: i64,
    pub tup_inserted: i64,
    pub tup_updated: i64,
    /// Backends of this database by pid, with their CPU time so far (user + system, seconds).
    pub cpu: Vec<(i32, f64)>,
}

/// Seconds of CPU (user + system) a process has used, from /proc/<pid>/stat.
fn cpu_seconds(pid: i32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(ticks / 100.0)
}

pub async fn work(pool: &PgPool) -> Result<Work, String> {
    // Statistics are sent by backends at the end of a transaction and read from a snapshot:
    // clear it so this reading is fresh.
    let mut conn = pool.acquire().await.map_err(|e| e.to_string())?;
    sqlx::query("SELECT pg_stat_clear_snapshot()")
        .execute(&mut *conn)
        .await
        .map_err(|e| e.to_string())?;
    let r = sqlx::query(
        "SELECT xact_commit + xact_rollback, blks_hit, blks_read, tup_returned, tup_fetched, \
                tup_inserted, tup_updated \
         FROM pg_stat_database WHERE datname = current_database()",
    )
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| e.to_string())?;
    let pids: Vec<i32> = sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid()",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(|e| e.to_string())?;
    let get = |i: usize| r.try_get::<i64, _>(i).map_err(|e| e.to_string());
    Ok(Work {
        xacts: get(0)?,
        blks_hit: get(1)?,
        blks_read: get(2)?,
        tup_returned: get(3)?,
        tup_fetched: get(4)?,
        tup_inserted: get(5)?,
        tup_updated: get(6)?,
        cpu: pids
            .into_iter()
            .filter_map(|p| cpu_seconds(p).map(|c| (p, c)))
            .collect(),
    })
}

/// What happened between `before` and `after`, as JSON; backends that appeared in between
/// count from zero (a backend that came and went in between is not seen).
pub fn delta(before: &Work, after: &Work) -> serde_json::Value {
    let cpu: f64 = after
        .cpu
        .iter()
        .map(|(pid, c)| {
            let was = before
                .cpu
                .iter()
                .find(|(p, _)| p == pid)
                .map_or(0.0, |(_, c)| *c);
            c - was
        })
        .sum();
    serde_json::json!({
        "transactions": after.xacts - before.xacts,
        "blocks_hit": after.blks_hit - before.blks_hit,
        "blocks_read": after.blks_read - before.blks_read,
        "tuples_returned": after.tup_returned - before.tup_returned,
        "tuples_fetched": after.tup_fetched - before.tup_fetched,
        "tuples_inserted": after.tup_inserted - before.tup_inserted,
        "tuples_updated": after.tup_updated - before.tup_updated,
        "backend_cpu_s": (cpu * 100.0).round() / 100.0,
        "backends": after.cpu.len(),
    })
}
