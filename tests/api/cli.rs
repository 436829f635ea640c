//! The `kultiva` binary as operators use it.

use std::process::{Command, Output};

use kultiva::tenancy::migrate::latest_tenant_version;
use kultiva::tenancy::provision::ProvisionOptions;
use kultiva::tenancy::registry;

use crate::support::{TestApp, base_env, sibling_database, unique_slug};

/// The CLI tests work on a database of their own: `migrate --all-tenants` would otherwise
/// migrate tenants that parallel tests keep behind on purpose.
async fn cli_app() -> (TestApp, String) {
    let url = sibling_database("cli").await;
    let app = TestApp::spawn_env(&[("DATABASE_URL", &url)]).await;
    (app, url)
}

pub(crate) fn kultiva(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kultiva"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in base_env() {
        cmd.env(k, v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A command that should exit but serves instead must fail the test, not hang the suite.
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kultiva runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("kultiva {args:?} did not exit within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn tenant_create_list_drop() {
    let (app, url) = cli_app().await;
    let db = [("DATABASE_URL", url.as_str())];
    let slug = unique_slug("cli");
    let out = kultiva(&["tenant", "create", &slug, "--name", "CLI Garden"], &db);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).contains(&format!("created tenant {slug}")));

    let out = kultiva(&["tenant", "list"], &db);
    assert!(out.status.success());
    let line = stdout(&out)
        .lines()
        .find(|l| l.starts_with(&slug))
        .map(str::to_owned)
        .expect("listed");
    assert!(
        line.contains("active") && line.contains("CLI Garden"),
        "{line}"
    );

    let out = kultiva(&["tenant", "create", &slug], &db);
    assert!(!out.status.success());
    assert_eq!(
        stderr_lines(&out).len(),
        1,
        "one line: {:?}",
        stderr_lines(&out)
    );
    assert!(stderr_lines(&out)[0].contains("already exists"));

    let out = kultiva(&["tenant", "drop", &slug], &db);
    assert!(!out.status.success(), "drop without --yes is refused");
    assert!(stderr_lines(&out)[0].contains("--yes"));
    let slug_parsed = kultiva::tenancy::TenantSlug::parse(&slug).expect("slug");
    assert!(
        registry::find_by_slug(app.state.platform_pool(), &slug_parsed)
            .await
            .expect("q")
            .is_some()
    );

    let out = kultiva(&["tenant", "drop", &slug, "--yes"], &db);
    assert!(out.status.success(), "{out:?}");
    assert!(
        registry::find_by_slug(app.state.platform_pool(), &slug_parsed)
            .await
            .expect("q")
            .is_none()
    );
}

#[tokio::test]
async fn invalid_slugs_are_refused_by_the_cli() {
    for bad in ["Public", "public", "a;drop", "../x", "gärten"] {
        let out = kultiva(&["tenant", "create", bad], &[]);
        assert!(!out.status.success(), "{bad}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("invalid slug"), "{lines:?}");
    }
}

#[tokio::test]
async fn migrate_all_tenants_brings_every_schema_up() {
    let (app, url) = cli_app().await;
    let db = [("DATABASE_URL", url.as_str())];
    let latest = latest_tenant_version();
    let behind = app
        .tenant_with(
            "bulk",
            ProvisionOptions {
                placement: None,
                target_version: Some(latest - 1),
                ..ProvisionOptions::default()
            },
        )
        .await;
    let out = kultiva(&["migrate", "--all-tenants", "--jobs", "2"], &db);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).contains("tenants migrated"));
    let stored = registry::find_by_id(app.state.platform_pool(), behind.id)
        .await
        .expect("q")
        .expect("row");
    assert_eq!(stored.schema_version, latest);
}

/// Off a terminal (here: a pipe) the bulk migration reports plain lines on stderr that name
/// the count of tenants done out of those behind, then a closing line.
#[tokio::test]
async fn migrate_all_tenants_reports_progress_in_plain_lines() {
    // A database of its own, so exactly this test's two tenants are behind.
    let url = sibling_database("cli_progress").await;
    let app = TestApp::spawn_env(&[("DATABASE_URL", &url)]).await;
    let db = [("DATABASE_URL", url.as_str())];
    let behind = ProvisionOptions {
        placement: None,
        target_version: Some(latest_tenant_version() - 1),
        ..ProvisionOptions::default()
    };
    let first = app.tenant_with("progress", behind.clone()).await;
    let second = app.tenant_with("progress", behind).await;
    let out = kultiva(&["migrate", "--all-tenants", "--jobs", "1"], &db);
    assert!(out.status.success(), "{out:?}");
    let lines = stderr_lines(&out);
    let progress: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("migrate tenants: "))
        .collect();
    assert!(
        progress
            .iter()
            .any(|l| l.starts_with("migrate tenants: 2/2 ")),
        "the last step names the count: {lines:?}"
    );
    let slugs = [first.slug.as_str(), second.slug.as_str()];
    assert!(
        progress
            .iter()
            .filter(|l| l.contains("/2 "))
            .all(|l| slugs.iter().any(|s| l.ends_with(s))),
        "each step names its tenant: {lines:?}"
    );
    assert_eq!(
        progress.last().map(|l| l.as_str()),
        Some("migrate tenants: 2 migrated, 0 already current, 0 failed"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l.contains("migrate tenants"))
            .all(|l| !l.contains('\u{1b}') && !l.contains('\r')),
        "no bar drawing off a terminal: {lines:?}"
    );
    assert!(stdout(&out).contains("tenants migrated: 2, already current: 0, failed: 0"));

    // Nothing behind: no progress at all, just the summary.
    let out = kultiva(&["migrate", "--all-tenants"], &db);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !stderr_lines(&out)
            .iter()
            .any(|l| l.starts_with("migrate tenants")),
        "{out:?}"
    );
    assert!(stdout(&out).contains("tenants migrated: 0"));
}

/// `seed` counts records off a terminal: the last step names every record of the set, the
/// same total the per-file summary on stdout adds up to.
#[tokio::test]
async fn seed_reports_progress_in_plain_lines() {
    let (_app, url) = cli_app().await;
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/catalog");
    let out = kultiva(&["seed", "--dir", fixtures], &[("DATABASE_URL", &url)]);
    assert!(out.status.success(), "{out:?}");
    let total: usize = stdout(&out)
        .lines()
        .filter(|l| l.contains(" created "))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse::<usize>().ok())
                .sum::<usize>()
        })
        .sum();
    assert!(total > 0, "{}", stdout(&out));
    let lines = stderr_lines(&out);
    let last_step = format!("seed: {total}/{total} ");
    assert!(
        lines.iter().any(|l| l.starts_with(&last_step)),
        "{last_step:?} in {lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("seed: ") && l.ends_with(" record(s) written")),
        "{lines:?}"
    );
}

#[test]
fn full_mode_refuses_the_placeholder_secret() {
    let out = kultiva(
        &["serve"],
        &[
            ("SERVICE_MODE", "full"),
            ("JWT_SECRET_KEY", "change-me-in-production"),
        ],
    );
    assert!(!out.status.success());
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("JWT_SECRET_KEY"), "{lines:?}");
}

#[test]
fn bad_configuration_is_reported_in_one_line() {
    let out = kultiva(
        &["migrate"],
        &[("SERVICE_MODE", "heavy"), ("BIND_ADDRESS", "nowhere")],
    );
    assert!(!out.status.success());
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("SERVICE_MODE") && lines[0].contains("BIND_ADDRESS"),
        "{lines:?}"
    );
}

#[test]
fn jobs_are_bounded() {
    let out = kultiva(&["migrate", "--all-tenants", "--jobs", "0"], &[]);
    assert!(!out.status.success());
}

#[tokio::test]
async fn service_accounts_and_platform_admins_come_from_the_cli() {
    let (app, url) = cli_app().await;
    let db = [("DATABASE_URL", url.as_str())];
    let tenant = app.tenant("svc-cli").await;
    // Unique: the CLI database outlives a run, and `list` shows earlier runs' accounts first.
    let name = format!("Irrigation bot {}", unique_slug("run"));
    let out = kultiva(
        &[
            "service-account",
            "create",
            "--name",
            &name,
            "--tenant",
            tenant.slug.as_str(),
            "--role",
            "grower",
        ],
        &db,
    );
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let raw = text.lines().last().expect("last line").trim().to_owned();
    assert!(
        raw.starts_with("svc_") && raw.len() == 47,
        "the raw key alone on the last line: {text}"
    );

    // The key works over HTTP in full mode (same database).
    let full = TestApp::spawn_env(&[("DATABASE_URL", &url), ("SERVICE_MODE", "full")]).await;
    let res = full
        .get_with(
            &format!("/api/v1/t/{}/sites/", tenant.slug),
            &[("x-api-key", &raw)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);

    let out = kultiva(&["service-account", "list"], &db);
    let line = stdout(&out)
        .lines()
        .find(|l| l.contains(&name))
        .map(str::to_owned)
        .expect("listed");
    let account = line.split_whitespace().next().expect("key").to_owned();

    let other = app.tenant("svc-cli-2").await;
    let out = kultiva(
        &[
            "service-account",
            "add-membership",
            "--account",
            &account,
            "--tenant",
            other.slug.as_str(),
            "--role",
            "viewer",
        ],
        &db,
    );
    assert!(out.status.success(), "{out:?}");
    let res = full
        .get_with(
            &format!("/api/v1/t/{}/sites/", other.slug),
            &[("x-api-key", &raw)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200, "second membership");

    let out = kultiva(&["service-account", "revoke", "--account", &account], &db);
    assert!(out.status.success(), "{out:?}");
    let res = full
        .get_with(
            &format!("/api/v1/t/{}/sites/", tenant.slug),
            &[("x-api-key", &raw)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 401, "revoked");

    // Refusals: unknown tenant, bad role, unknown account; nothing is created.
    let out = kultiva(
        &[
            "service-account",
            "create",
            "--name",
            "X",
            "--tenant",
            "no-such-garden",
            "--role",
            "viewer",
        ],
        &db,
    );
    assert!(!out.status.success());
    let out = kultiva(
        &[
            "service-account",
            "create",
            "--name",
            "X",
            "--tenant",
            tenant.slug.as_str(),
            "--role",
            "owner",
        ],
        &db,
    );
    assert!(!out.status.success());
    let out = kultiva(
        &["service-account", "revoke", "--account", "not-a-key"],
        &db,
    );
    assert!(!out.status.success());

    // The first platform admin.
    let user = full.user("first-admin").await;
    let res = full.rest_as(&user).get("/api/v1/admin/users").await;
    assert_eq!(res.status().as_u16(), 403);
    let out = kultiva(&["platform-admin", "grant", &user.email], &db);
    assert!(out.status.success(), "{out:?}");
    let res = full.rest_as(&user).get("/api/v1/admin/users").await;
    assert_eq!(
        res.status().as_u16(),
        200,
        "rights apply to the running session"
    );
    let out = kultiva(&["platform-admin", "grant", "nobody@example.test"], &db);
    assert!(!out.status.success());
}
