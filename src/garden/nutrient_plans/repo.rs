//! SQL of the garden's own nutrient plans, their phase entries and the plan assignments of
//! plants and runs. Tables are named `tenant.<table>` and rendered by `TenantTx::sql`.

use sqlx::Row;
use sqlx::postgres::PgRow;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::model::{Npk, NutrientPlan, Nutrients, Owner, PlanPhase, PlanProduct, TENANT_PREFIX};
use crate::tenancy::TenantTx;

fn decode_err(what: &str, e: impl std::fmt::Display) -> sqlx::Error {
    sqlx::Error::Decode(format!("{what}: {e}").into())
}

const PLAN_COLUMNS: &str = "id, name, description, recommended_substrate_type, \
     reference_substrate_type, tags, cloned_from_key, version";
const PHASE_COLUMNS: &str = "id, plan_id, phase_name, sequence_order, week_start, week_end, \
     target_ec_ms, reference_ec_ms, ph_min, ph_max, npk_ratio, nutrients, products, notes";

fn decode_plan(row: &PgRow) -> Result<(Uuid, NutrientPlan), sqlx::Error> {
    let id: Uuid = row.try_get("id")?;
    let tags: serde_json::Value = row.try_get("tags")?;
    Ok((
        id,
        NutrientPlan {
            key: format!("{TENANT_PREFIX}{id}"),
            owner: Owner::Garden,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            culture: None,
            recommended_substrate_type: row.try_get("recommended_substrate_type")?,
            reference_substrate_type: row.try_get("reference_substrate_type")?,
            tags: serde_json::from_value(tags).map_err(|e| decode_err("plan tags", e))?,
            cloned_from_key: row.try_get("cloned_from_key")?,
            version: row.try_get("version")?,
            phases: Vec::new(),
        },
    ))
}

fn decode_phase(row: &PgRow) -> Result<(Uuid, PlanPhase), sqlx::Error> {
    let json = |name: &str| -> Result<Option<serde_json::Value>, sqlx::Error> { row.try_get(name) };
    let npk: Option<Npk> = json("npk_ratio")?
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| decode_err("npk_ratio", e))?;
    let nutrients: Option<Nutrients> = json("nutrients")?
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| decode_err("nutrients", e))?;
    let products: Vec<PlanProduct> =
        serde_json::from_value(row.try_get("products")?).map_err(|e| decode_err("products", e))?;
    let id: Uuid = row.try_get("id")?;
    Ok((
        row.try_get("plan_id")?,
        PlanPhase {
            key: id.to_string(),
            phase_name: row.try_get("phase_name")?,
            sequence_order: row.try_get("sequence_order")?,
            week_start: row.try_get("week_start")?,
            week_end: row.try_get("week_end")?,
            target_ec_ms: row.try_get("target_ec_ms")?,
            reference_ec_ms: row.try_get("reference_ec_ms")?,
            ph_min: row.try_get("ph_min")?,
            ph_max: row.try_get("ph_max")?,
            npk_ratio: npk,
            nutrients,
            products,
            notes: row.try_get("notes")?,
        },
    ))
}

/// The garden's plans (with phases), by name.
pub async fn list_plans(tx: &mut TenantTx) -> Result<Vec<NutrientPlan>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {PLAN_COLUMNS} FROM tenant.nutrient_plans ORDER BY lower(name), id"
    ));
    let rows = sqlx::query(sql).fetch_all(tx.conn()).await?;
    let mut plans: Vec<(Uuid, NutrientPlan)> =
        rows.iter().map(decode_plan).collect::<Result<_, _>>()?;
    let sql = tx.sql(&format!(
        "SELECT {PHASE_COLUMNS} FROM tenant.nutrient_plan_phases \
         ORDER BY plan_id, sequence_order, week_start, id"
    ));
    let rows = sqlx::query(sql).fetch_all(tx.conn()).await?;
    for row in &rows {
        let (plan_id, phase) = decode_phase(row)?;
        if let Some((_, p)) = plans.iter_mut().find(|(id, _)| *id == plan_id) {
            p.phases.push(phase);
        }
    }
    Ok(plans.into_iter().map(|(_, p)| p).collect())
}

pub async fn get_plan(tx: &mut TenantTx, id: Uuid) -> Result<Option<NutrientPlan>, sqlx::Error> {
    let sql = tx.sql(&format!(
        "SELECT {PLAN_COLUMNS} FROM tenant.nutrient_plans WHERE id = $1"
    ));
    let Some(row) = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await? else {
        return Ok(None);
    };
    let (_, mut plan) = decode_plan(&row)?;
    let sql = tx.sql(&format!(
        "SELECT {PHASE_COLUMNS} FROM tenant.nutrient_plan_phases WHERE plan_id = $1 \
         ORDER BY sequence_order, week_start, id"
    ));
    let rows = sqlx::query(sql).bind(id).fetch_all(tx.conn()).await?;
    for row in &rows {
        plan.phases.push(decode_phase(row)?.1);
    }
    Ok(Some(plan))
}

/// Locks a plan row for a change; false when it does not exist.
pub async fn lock_plan(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let sql = tx.sql("SELECT id FROM tenant.nutrient_plans WHERE id = $1 FOR UPDATE");
    Ok(sqlx::query(sql)
        .bind(id)
        .fetch_optional(tx.conn())
        .await?
        .is_some())
}

pub async fn name_taken(tx: &mut TenantTx, name: &str) -> Result<bool, sqlx::Error> {
    let sql =
        tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.nutrient_plans WHERE lower(name) = lower($1))");
    sqlx::query_scalar(sql)
        .bind(name)
        .fetch_one(tx.conn())
        .await
}

/// Inserts a plan with its phases (ids are new); `None` when the name is taken.
pub async fn insert_plan(
    tx: &mut TenantTx,
    plan: &NutrientPlan,
) -> Result<Option<Uuid>, sqlx::Error> {
    let id = Uuid::now_v7();
    let sql = tx.sql(
        "INSERT INTO tenant.nutrient_plans (id, name, description, recommended_substrate_type, \
         reference_substrate_type, tags, cloned_from_key, version) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING id",
    );
    let inserted: Option<Uuid> = sqlx::query_scalar(sql)
        .bind(id)
        .bind(&plan.name)
        .bind(&plan.description)
        .bind(&plan.recommended_substrate_type)
        .bind(&plan.reference_substrate_type)
        .bind(serde_json::json!(plan.tags))
        .bind(&plan.cloned_from_key)
        .bind(plan.version)
        .fetch_optional(tx.conn())
        .await?;
    if inserted.is_none() {
        return Ok(None);
    }
    for phase in &plan.phases {
        let sql = tx.sql(
            "INSERT INTO tenant.nutrient_plan_phases (id, plan_id, phase_name, sequence_order, \
             week_start, week_end, target_ec_ms, reference_ec_ms, ph_min, ph_max, npk_ratio, \
             nutrients, products, notes) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        );
        sqlx::query(sql)
            .bind(Uuid::now_v7())
            .bind(id)
            .bind(&phase.phase_name)
            .bind(phase.sequence_order)
            .bind(phase.week_start)
            .bind(phase.week_end)
            .bind(phase.target_ec_ms)
            .bind(phase.reference_ec_ms)
            .bind(phase.ph_min)
            .bind(phase.ph_max)
            .bind(phase.npk_ratio.as_ref().map(|n| serde_json::json!(n)))
            .bind(phase.nutrients.as_ref().map(|n| serde_json::json!(n)))
            .bind(serde_json::json!(phase.products))
            .bind(&phase.notes)
            .execute(tx.conn())
            .await?;
    }
    Ok(Some(id))
}

/// Deletes a plan (its phases go with it) and the assignments naming it.
pub async fn delete_plan(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let sql = tx.sql("DELETE FROM tenant.nutrient_plan_assignments WHERE plan_key = $1");
    sqlx::query(sql)
        .bind(format!("{TENANT_PREFIX}{id}"))
        .execute(tx.conn())
        .await?;
    let sql = tx.sql("DELETE FROM tenant.nutrient_plans WHERE id = $1");
    let done = sqlx::query(sql).bind(id).execute(tx.conn()).await?;
    Ok(done.rows_affected() == 1)
}

/// Sets the targets of one phase entry (omitted ones stay) and bumps the plan's version.
pub async fn set_targets(
    tx: &mut TenantTx,
    plan_id: Uuid,
    phase_id: Uuid,
    target_ec_ms: Option<f64>,
    reference_ec_ms: Option<f64>,
) -> Result<(), sqlx::Error> {
    let sql = tx.sql(
        "UPDATE tenant.nutrient_plan_phases SET target_ec_ms = coalesce($3, target_ec_ms), \
         reference_ec_ms = coalesce($4, reference_ec_ms) WHERE id = $2 AND plan_id = $1",
    );
    sqlx::query(sql)
        .bind(plan_id)
        .bind(phase_id)
        .bind(target_ec_ms)
        .bind(reference_ec_ms)
        .execute(tx.conn())
        .await?;
    let sql = tx.sql(
        "UPDATE tenant.nutrient_plans SET version = version + 1, updated_at = now() WHERE id = $1",
    );
    sqlx::query(sql).bind(plan_id).execute(tx.conn()).await?;
    Ok(())
}

/// Number of the garden's plan phases whose products name this fertiliser key.
pub async fn plans_using_product(tx: &mut TenantTx, key: &str) -> Result<i64, sqlx::Error> {
    let sql = tx.sql(
        "SELECT count(DISTINCT plan_id) FROM tenant.nutrient_plan_phases \
         WHERE products @> jsonb_build_array(jsonb_build_object('fertilizer_key', $1::text))",
    );
    sqlx::query_scalar(sql).bind(key).fetch_one(tx.conn()).await
}

// ---------------------------------------------------------------------------------------------
// Plants, runs and assignments.

/// What the plan resolution needs of a plant.
#[derive(Debug, Clone)]
pub struct PlantFacts {
    pub id: Uuid,
    pub species_key: String,
    /// planted_on, else the day it was created.
    pub start: Date,
    pub archived: bool,
    /// The open phase's name (as entered), when the plant is in a phase.
    pub phase_name: Option<String>,
    pub run_id: Option<Uuid>,
    /// Plan key assigned to the plant itself.
    pub plant_plan: Option<String>,
    /// Plan key assigned to its run.
    pub run_plan: Option<String>,
}

pub async fn plant_facts(tx: &mut TenantTx, id: Uuid) -> Result<Option<PlantFacts>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT p.id, p.species_key, p.planted_on, p.created_at, p.archived_at IS NOT NULL AS archived, \
           (SELECT h.phase_name FROM tenant.plant_phase_history h \
             WHERE h.plant_id = p.id AND h.exited_at IS NULL LIMIT 1) AS phase_name, \
           rp.run_id, \
           (SELECT a.plan_key FROM tenant.nutrient_plan_assignments a WHERE a.plant_id = p.id) AS plant_plan, \
           (SELECT a.plan_key FROM tenant.nutrient_plan_assignments a \
             WHERE rp.run_id IS NOT NULL AND a.run_id = rp.run_id) AS run_plan \
         FROM tenant.plants p LEFT JOIN tenant.planting_run_plants rp ON rp.plant_id = p.id \
         WHERE p.id = $1",
    );
    let Some(row) = sqlx::query(sql).bind(id).fetch_optional(tx.conn()).await? else {
        return Ok(None);
    };
    let planted: Option<Date> = row.try_get("planted_on")?;
    let created: OffsetDateTime = row.try_get("created_at")?;
    let phase_name: Option<String> = row.try_get("phase_name")?;
    Ok(Some(PlantFacts {
        id,
        species_key: row.try_get("species_key")?,
        start: planted.unwrap_or(created.date()),
        archived: row.try_get("archived")?,
        phase_name: phase_name.filter(|n| !n.is_empty()),
        run_id: row.try_get("run_id")?,
        plant_plan: row.try_get("plant_plan")?,
        run_plan: row.try_get("run_plan")?,
    }))
}

pub async fn run_exists(tx: &mut TenantTx, id: Uuid) -> Result<bool, sqlx::Error> {
    let sql = tx.sql("SELECT EXISTS (SELECT 1 FROM tenant.planting_runs WHERE id = $1)");
    sqlx::query_scalar(sql).bind(id).fetch_one(tx.conn()).await
}

/// Assigns a plan to a plant or a run (replacing one); answers the replaced plan key.
pub async fn assign(
    tx: &mut TenantTx,
    plant: Option<Uuid>,
    run: Option<Uuid>,
    plan_key: &str,
) -> Result<Option<String>, sqlx::Error> {
    let sql = tx.sql(
        "SELECT plan_key FROM tenant.nutrient_plan_assignments \
         WHERE ($1::uuid IS NOT NULL AND plant_id = $1) OR ($2::uuid IS NOT NULL AND run_id = $2) \
         FOR UPDATE",
    );
    let before: Option<String> = sqlx::query_scalar(sql)
        .bind(plant)
        .bind(run)
        .fetch_optional(tx.conn())
        .await?;
    let sql = tx.sql(
        "DELETE FROM tenant.nutrient_plan_assignments \
         WHERE ($1::uuid IS NOT NULL AND plant_id = $1) OR ($2::uuid IS NOT NULL AND run_id = $2)",
    );
    sqlx::query(sql)
        .bind(plant)
        .bind(run)
        .execute(tx.conn())
        .await?;
    let sql = tx.sql(
        "INSERT INTO tenant.nutrient_plan_assignments (id, plant_id, run_id, plan_key) \
         VALUES ($1, $2, $3, $4)",
    );
    sqlx::query(sql)
        .bind(Uuid::now_v7())
        .bind(plant)
        .bind(run)
        .bind(plan_key)
        .execute(tx.conn())
        .await?;
    Ok(before)
}
