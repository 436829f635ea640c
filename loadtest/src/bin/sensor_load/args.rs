//! `--name value` options of every command.

use std::collections::HashMap;

pub struct Args(HashMap<String, String>);

impl Args {
    pub fn parse(raw: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut map = HashMap::new();
        let mut raw = raw;
        while let Some(name) = raw.next() {
            let Some(name) = name.strip_prefix("--") else {
                return Err(format!("unexpected argument {name:?}"));
            };
            let value = raw
                .next()
                .ok_or_else(|| format!("--{name} needs a value"))?;
            map.insert(name.to_owned(), value);
        }
        Ok(Self(map))
    }

    pub fn text(&self, name: &str) -> Result<String, String> {
        self.0
            .get(name)
            .cloned()
            .ok_or_else(|| format!("--{name} is required"))
    }

    pub fn text_or(&self, name: &str, default: &str) -> String {
        self.0
            .get(name)
            .cloned()
            .unwrap_or_else(|| default.to_owned())
    }

    pub fn number(&self, name: &str, default: usize) -> Result<usize, String> {
        match self.0.get(name) {
            None => Ok(default),
            Some(raw) => match raw.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("--{name}: not a positive whole number: {raw:?}")),
            },
        }
    }
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json(path: &str, value: &serde_json::Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{path}: {e}"))
}

/// Nearest-rank percentile in milliseconds of a sorted sample of seconds.
pub fn percentile_ms(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)] * 1000.0
}

pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}
