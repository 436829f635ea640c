-- Tasks and care reminders (Garden III). Tasks follow the states of domain 2.7; care profiles
-- are derived per plant from species and family (domain 2.8) and stored, so the due list is
-- one indexed statement over `care_reminders` (one row per plant and reminder type, with the
-- day it is due) whatever the garden's size.
CREATE TABLE tasks (
    id                   uuid        PRIMARY KEY,
    name                 text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    instruction          text        CHECK (char_length(instruction) <= 5000),
    category             text        NOT NULL DEFAULT 'maintenance' CHECK (category IN (
                             'training', 'pruning', 'ausgeizen', 'transplant', 'feeding', 'ipm',
                             'harvest', 'observation', 'maintenance', 'care_reminder', 'seasonal',
                             'phenological')),
    priority             text        NOT NULL DEFAULT 'medium'
                                     CHECK (priority IN ('low', 'medium', 'high', 'critical')),
    status               text        NOT NULL DEFAULT 'pending' CHECK (status IN (
                             'pending', 'in_progress', 'completed', 'skipped', 'failed', 'dormant')),
    plant_id             uuid        REFERENCES plants (id) ON DELETE CASCADE,
    due_on               date,
    -- A platform user who is a member of the garden (checked when set).
    assigned_to          uuid,
    checklist            jsonb       NOT NULL DEFAULT '[]'::jsonb,
    recurrence_kind      text        CHECK (recurrence_kind IN ('daily', 'weekly', 'every_n_days', 'phase_entry')),
    recurrence_every_days integer    CHECK (recurrence_every_days BETWEEN 1 AND 365),
    recurrence_end_on    date,
    trigger_phase        text        CHECK (char_length(trigger_phase) BETWEEN 1 AND 100),
    parent_task_id       uuid        REFERENCES tasks (id) ON DELETE SET NULL,
    completion_notes     text        CHECK (char_length(completion_notes) <= 2000),
    started_at           timestamptz,
    completed_at         timestamptz,
    reopened_at          timestamptz,
    reopened_from_status text,
    created_by           text        NOT NULL CHECK (char_length(created_by) BETWEEN 1 AND 200),
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK (recurrence_end_on IS NULL OR recurrence_kind IS NOT NULL),
    CHECK (trigger_phase IS NULL OR recurrence_kind = 'phase_entry'),
    CHECK (recurrence_kind IS DISTINCT FROM 'phase_entry' OR trigger_phase IS NOT NULL)
);
CREATE INDEX tasks_status_order_idx ON tasks (status, due_on, id);
CREATE INDEX tasks_order_idx ON tasks (due_on, id);
CREATE INDEX tasks_plant_idx ON tasks (plant_id, completed_at);
CREATE INDEX tasks_dormant_idx ON tasks (plant_id) WHERE status = 'dormant';

-- One care profile per plant, derived once (species watering interval, else the family's
-- style, else tropical) and stored; the learned intervals move with the grower's confirmations.
CREATE TABLE care_profiles (
    plant_id                     uuid        PRIMARY KEY REFERENCES plants (id) ON DELETE CASCADE,
    care_style                   text        NOT NULL,
    source                       text        NOT NULL CHECK (source IN ('species', 'family', 'default')),
    watering_interval_days       integer     NOT NULL CHECK (watering_interval_days BETWEEN 1 AND 90),
    winter_watering_multiplier   double precision NOT NULL CHECK (winter_watering_multiplier BETWEEN 1 AND 5),
    fertilizing_interval_days    integer     NOT NULL CHECK (fertilizing_interval_days BETWEEN 7 AND 90),
    fertilizing_month_from       integer     NOT NULL CHECK (fertilizing_month_from BETWEEN 1 AND 12),
    fertilizing_month_to         integer     NOT NULL CHECK (fertilizing_month_to BETWEEN 1 AND 12),
    repotting_interval_months    integer     NOT NULL CHECK (repotting_interval_months BETWEEN 6 AND 60),
    pruning_interval_days        integer     CHECK (pruning_interval_days BETWEEN 1 AND 365),
    pest_check_interval_days     integer     NOT NULL CHECK (pest_check_interval_days BETWEEN 3 AND 90),
    winter_action                text,
    winter_action_month          integer     CHECK (winter_action_month BETWEEN 1 AND 12),
    spring_action                text,
    spring_action_month          integer     CHECK (spring_action_month BETWEEN 1 AND 12),
    adaptive_learning_enabled    boolean     NOT NULL DEFAULT true,
    watering_interval_learned    integer     CHECK (watering_interval_learned BETWEEN 1 AND 90),
    fertilizing_interval_learned integer     CHECK (fertilizing_interval_learned BETWEEN 1 AND 120),
    created_at                   timestamptz NOT NULL DEFAULT now()
);

-- The reminders of a plant: one row per type the profile generates, with the day it is due.
CREATE TABLE care_reminders (
    id            uuid        PRIMARY KEY,
    plant_id      uuid        NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    reminder_type text        NOT NULL CHECK (reminder_type IN (
                      'watering', 'fertilizing', 'repotting', 'pruning', 'pest_check', 'overwintering')),
    due_on        date        NOT NULL,
    -- The interval that produced `due_on` (days).
    interval_days integer     NOT NULL CHECK (interval_days BETWEEN 1 AND 1830),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (plant_id, reminder_type)
);
CREATE INDEX care_reminders_due_idx ON care_reminders (due_on, plant_id);

-- Every confirmation and snooze (the care log).
CREATE TABLE care_confirmations (
    id                     uuid        PRIMARY KEY,
    plant_id               uuid        NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    reminder_type          text        NOT NULL,
    action                 text        NOT NULL CHECK (action IN ('confirmed', 'snoozed')),
    confirmed_at           timestamptz NOT NULL DEFAULT now(),
    confirmed_on           date        NOT NULL,
    snooze_days            integer     CHECK (snooze_days BETWEEN 1 AND 30),
    interval_at_time_days  integer     NOT NULL,
    notes                  text        CHECK (char_length(notes) <= 2000),
    actor                  text        NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200)
);
CREATE INDEX care_confirmations_plant_idx ON care_confirmations (plant_id, reminder_type, confirmed_at DESC, id DESC);
