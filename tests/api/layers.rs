//! The shape of `src/`, checked: the layer order written at the top of `src/lib.rs` holds for
//! every `crate::` path a module names (test modules and comments aside), and no capability
//! reaches into another capability's REST face or tool module. A failure names the file, the
//! path, and the rule it breaks.
//!
//! Reads files only; needs no database.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The faces: the modules at the top that speak HTTP, MCP or HTML. A `routes.rs` (or a file
/// under a `routes/` folder) of any other module is part of the REST face, `http`.
const FACES: &[&str] = &["http", "mcp", "web"];

/// Tool modules every tool module may use (they belong to no capability).
const SHARED_TOOL_MODULES: &[&str] = &["shared", "view"];

/// Folders that serve every capability of their module (the catalogue's engine writes the
/// REST face of every catalogue kind).
const SHARED_FOLDERS: &[(&str, &str)] = &[("catalog", "engine")];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The layers of `src/lib.rs`'s "Layers" list, bottom first: one line per layer, its modules
/// in backticks. Within a line a module may use the ones named before it.
fn layer_order() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).expect("src/lib.rs");
    let mut layers = Vec::new();
    let mut inside = false;
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim();
        if doc.starts_with("## Layers") {
            inside = true;
            continue;
        }
        if inside && doc.starts_with("##") {
            break;
        }
        if !inside {
            continue;
        }
        // "1. pure rules and the error type: `error`, `values`, `rules`"
        let Some(rest) = doc
            .split_once(". ")
            .filter(|(n, _)| n.parse::<u32>().is_ok())
        else {
            continue;
        };
        let modules: Vec<String> = rest
            .1
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect();
        if !modules.is_empty() {
            layers.push(modules);
        }
    }
    layers
}

/// Every module of the crate root, as `src/lib.rs` and `src/main.rs` declare them.
fn crate_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).expect("src/lib.rs");
    let mut modules: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_owned())
        .collect();
    modules.insert("main".to_owned());
    modules.insert("lib".to_owned());
    modules
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comment lines and without `#[cfg(test)]` items, with each
/// kept line's number.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut kept = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("#[cfg(test)]") {
            // Skip the item that follows: to its closing brace, or its `;`.
            let mut depth = 0i32;
            let mut opened = false;
            for (_, item) in lines.by_ref() {
                for c in item.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                let t = item.trim();
                if (opened && depth <= 0) || (!opened && t.ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        kept.push((n + 1, line.to_owned()));
    }
    kept
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads `a::b::c` at the start of `s`.
fn path_at(s: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut rest = s;
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_owned());
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(r) if r.starts_with(is_ident) => rest = r,
            _ => break,
        }
    }
    segments
}

/// Every path named after `crate::` on a line (not `$crate::`), a `{…}` group split into its
/// members (a group spanning lines is read from the following text).
fn crate_paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("crate::") {
        let start = at + i;
        at = start + "crate::".len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            continue;
        }
        let rest = &code[at..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut member = String::new();
            let mut members = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        members.push(std::mem::take(&mut member));
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                member.push(c);
            }
            members.push(member);
            for m in members {
                let path = path_at(m.trim());
                if !path.is_empty() && path[0] != "self" {
                    found.push((start, path));
                }
            }
        } else {
            let path = path_at(rest);
            if !path.is_empty() {
                found.push((start, path));
            }
        }
    }
    found
}

/// The module a file counts as: its top-level module, or `http` for the REST face of a
/// module that is not a face.
fn file_module(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let top = parts[0].trim_end_matches(".rs").to_owned();
    let is_routes = parts.last().is_some_and(|f| f == "routes.rs")
        || parts[..parts.len() - 1].iter().any(|p| p == "routes");
    if is_routes && !FACES.contains(&top.as_str()) {
        "http".to_owned()
    } else {
        top
    }
}

/// The module a path points into, by the same rule.
fn target_module(path: &[String]) -> String {
    let top = path[0].clone();
    if !FACES.contains(&top.as_str()) && path.iter().any(|s| s == "routes") {
        "http".to_owned()
    } else {
        top
    }
}

/// `garden/plants/service.rs` → (`garden`, `plants`): the capability folder a file is in.
fn capability_of(rel: &Path) -> Option<(String, String)> {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (parts.len() >= 3).then(|| (parts[0].clone(), parts[1].clone()))
}

struct Finding {
    file: String,
    line: usize,
    path: String,
    why: String,
}

fn findings() -> Vec<Finding> {
    let order = layer_order();
    let rank = |m: &str| -> Option<(usize, usize)> {
        order
            .iter()
            .enumerate()
            .find_map(|(layer, modules)| modules.iter().position(|x| x == m).map(|p| (layer, p)))
    };
    let known = crate_modules();
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src_dir()).expect("under src").to_owned();
        let text = std::fs::read_to_string(&file).expect("read");
        let from = file_module(&rel);
        let from_rank = rank(&from);
        let capability = capability_of(&rel);
        let tool_module = (rel.parent() == Some(Path::new("mcp/tools")))
            .then(|| rel.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .flatten()
            .filter(|m| m != "mod");
        for (line, code) in code_lines(&text) {
            let mut paths: Vec<Vec<String>> =
                crate_paths(&code).into_iter().map(|(_, p)| p).collect();
            // A tool module naming a sibling by `super::sibling::…`.
            if tool_module.is_some() {
                let mut at = 0;
                while let Some(i) = code[at..].find("super::") {
                    let start = at + i + "super::".len();
                    at = start;
                    let p = path_at(&code[start..]);
                    if !p.is_empty() && p[0] != "super" {
                        let mut full = vec!["mcp".to_owned(), "tools".to_owned()];
                        full.extend(p);
                        paths.push(full);
                    }
                }
            }
            for path in paths {
                if !known.contains(&path[0]) {
                    continue; // a macro exported at the crate root, not a module
                }
                let shown = format!("crate::{}", path.join("::"));
                let to = target_module(&path);
                let mut push = |why: String| {
                    out.push(Finding {
                        file: format!("src/{}", rel.display()),
                        line,
                        path: shown.clone(),
                        why,
                    })
                };
                if to != from {
                    match (from_rank, rank(&to)) {
                        (Some(f), Some(t)) if t < f => {}
                        (Some(f), Some(t)) => push(format!(
                            "`{from}` (layer {}) may not use `{to}` (layer {}): it is not below it",
                            f.0 + 1,
                            t.0 + 1
                        )),
                        (None, _) => push(format!("`{from}` is not in src/lib.rs's layer list")),
                        (_, None) => push(format!("`{to}` is not in src/lib.rs's layer list")),
                    }
                }
                // Another capability's REST face.
                if let Some((top, cap)) = &capability
                    && path.len() >= 3
                    && path.iter().any(|s| s == "routes")
                    && (path[0] != *top || path[1] != *cap)
                    && !FACES.contains(&path[0].as_str())
                    && !SHARED_FOLDERS.contains(&(path[0].as_str(), path[1].as_str()))
                {
                    push(format!(
                        "the capability `{top}::{cap}` may not use another capability's REST face"
                    ));
                }
                // Another capability's tool module.
                if let Some(me) = &tool_module
                    && path.len() >= 3
                    && path[0] == "mcp"
                    && path[1] == "tools"
                    && path[2] != *me
                    && !SHARED_TOOL_MODULES.contains(&path[2].as_str())
                {
                    push(format!(
                        "the tool module `{me}` may not use another tool module (shared helpers \
                         live in mcp::tools::shared)"
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn the_layer_list_names_every_module_once() {
    let order = layer_order();
    assert!(
        order.len() >= 5,
        "src/lib.rs must list the layers under `## Layers`"
    );
    let listed: Vec<&String> = order.iter().flatten().collect();
    let unique: BTreeSet<&String> = listed.iter().copied().collect();
    assert_eq!(listed.len(), unique.len(), "a module is listed twice");
    let modules = crate_modules();
    let missing: Vec<&String> = modules.iter().filter(|m| !unique.contains(m)).collect();
    assert!(
        missing.is_empty(),
        "modules missing from src/lib.rs's layer list: {missing:?}"
    );
    let unknown: Vec<&&String> = unique.iter().filter(|m| !modules.contains(**m)).collect();
    assert!(unknown.is_empty(), "listed but not modules: {unknown:?}");
}

#[test]
fn no_module_imports_against_the_layer_order() {
    let wrong: Vec<String> = findings()
        .iter()
        .map(|f| format!("{}:{}: {}: {}", f.file, f.line, f.path, f.why))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} path(s) against the layers of src/lib.rs:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_reader_sees_paths_as_written() {
    let code = "use crate::{auth::Role, http::json::{A, B}, self}; let x = $crate::no::path; \
                f(crate::garden::plants::routes::actor(d)); mycrate::x";
    let paths: Vec<String> = crate_paths(code)
        .into_iter()
        .map(|(_, p)| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        ["auth::Role", "http::json", "garden::plants::routes::actor"]
    );
    let lines =
        code_lines("use a;\n// crate::x\n#[cfg(test)]\nmod tests {\n    use crate::y;\n}\nuse b;");
    let kept: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(kept, ["use a;", "use b;"]);
    assert_eq!(file_module(Path::new("garden/sites/routes.rs")), "http");
    assert_eq!(file_module(Path::new("mcp/routes.rs")), "mcp");
    assert_eq!(file_module(Path::new("garden/sites/service.rs")), "garden");
}
