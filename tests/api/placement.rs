//! Placement: a tenant's schema lives on the server its registry row names. Two databases on
//! the test server stand in for two servers.

use kultiva::tenancy::provision::{self, ProvisionOptions};
use kultiva::tenancy::{TenantSlug, registry};
use serde_json::Value;

use crate::support::{TestApp, sibling_database, unique_slug};

#[tokio::test]
async fn tenants_live_on_the_placement_their_row_names() {
    let second_url = sibling_database("placement2").await;
    let app = TestApp::spawn_env(&[("TENANT_PLACEMENTS", &format!("second={second_url}"))]).await;

    let slug = TenantSlug::parse(&unique_slug("placed")).expect("slug");
    let tenant = provision::create_tenant(
        &app.state,
        &slug,
        "Placed",
        ProvisionOptions {
            placement: Some("second".into()),
            target_version: None,
            ..ProvisionOptions::default()
        },
    )
    .await
    .expect("provisioned on the second placement");
    assert_eq!(tenant.placement, "second");

    let in_second = sqlx::PgPool::connect(&second_url)
        .await
        .expect("connect second");
    let schema_in = |pool: &sqlx::PgPool| {
        let pool = pool.clone();
        let name = tenant.schema_name.as_str().to_owned();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM pg_namespace WHERE nspname = $1")
                .bind(name)
                .fetch_one(&pool)
                .await
                .expect("count")
        }
    };
    assert_eq!(
        schema_in(&in_second).await,
        1,
        "schema on the second server"
    );
    assert_eq!(
        schema_in(app.state.platform_pool()).await,
        0,
        "not on the primary"
    );
    // The registry stays on the primary.
    assert!(
        registry::find_by_slug(app.state.platform_pool(), &slug)
            .await
            .expect("q")
            .is_some()
    );

    app.create_site(&tenant, "Remote bed").await;
    let page: Value = app
        .get(&format!("/api/v1/t/{slug}/sites/"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["items"][0]["name"], "Remote bed");
    let rows: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM {}.sites",
        tenant.schema_name.quoted()
    )))
    .fetch_one(&in_second)
    .await
    .expect("rows on second");
    assert_eq!(rows, 1);

    provision::drop_tenant(&app.state, &slug)
        .await
        .expect("dropped");
    assert_eq!(schema_in(&in_second).await, 0);
    in_second.close().await;
}
