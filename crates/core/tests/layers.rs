//! The layering, kept: every file under `src/` may import only the rooms
//! its room's row of docs/architecture.md's table allows (read from the
//! document itself, so that the table and this test cannot drift apart),
//! and the simulator names no remedy.
//!
//! An import is a `crate::ROOM` path anywhere in a file's code, or a
//! `super::` path that climbs out of the file's room. Comments and test
//! code (`tests*.rs` files, `harness.rs`, inline `#[cfg(test)] mod … {}`)
//! are not read: tests may run the whole simulator.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The table between the markers in docs/architecture.md: room → rooms it may import.
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let text = std::fs::read_to_string(&doc).expect("docs/architecture.md");
    let (_, rest) = text
        .split_once("<!-- layers -->")
        .expect("the layer table's start marker");
    let (table, _) = rest.split_once("<!-- /layers -->").expect("its end marker");
    let mut out = BTreeMap::new();
    for line in table.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (room, may) = (cells[1].trim_matches('`'), cells[2]);
        if room == "room" || room.starts_with("---") {
            continue;
        }
        let rooms = may
            .split(',')
            .map(|r| r.trim().trim_matches('`').to_string())
            .filter(|r| !r.is_empty() && r != "—")
            .collect();
        out.insert(room.to_string(), rooms);
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's code without comments and without an inline test module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers following each occurrence of `prefix`.
fn after<'a>(code: &'a str, prefix: &str) -> Vec<(usize, &'a str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix) {
        let at = from + i;
        let start = at + prefix.len();
        let end = code[start..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(code.len(), |e| start + e);
        let before = code[..at].chars().next_back();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            out.push((at, &code[start..end]));
        }
        from = end.max(at + 1);
    }
    out
}

/// Every (room, imported room, file) of the crate's code.
fn arrows() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let mut module: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
        if module.iter().any(|m| m.starts_with("tests") || *m == "harness") {
            continue;
        }
        if matches!(module.last(), Some(&"mod") | Some(&"lib")) {
            module.pop();
        }
        let room = module.first().copied().unwrap_or("lib").to_string();
        let code = code(&std::fs::read_to_string(&f).unwrap());
        let mut to = BTreeSet::new();
        for (_, r) in after(&code, "crate::") {
            to.insert(r.to_string());
        }
        let mut i = 0;
        while let Some(j) = code[i..].find("super::") {
            let at = i + j;
            let mut ups = 0;
            let mut k = at;
            while code[k..].starts_with("super::") {
                ups += 1;
                k += "super::".len();
            }
            if ups > 0 && ups <= module.len() {
                let base = &module[..module.len() - ups];
                let next: String = code[k..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                to.insert(base.first().map_or(next, |r| r.to_string()));
            }
            i = k.max(at + 1);
        }
        to.remove(&room);
        for r in to {
            out.push((room.clone(), r, rel.clone()));
        }
    }
    out
}

#[test]
fn no_import_runs_up_the_layers() {
    let allowed = allowed();
    let mut bad = Vec::new();
    for (room, to, file) in arrows() {
        match allowed.get(&room) {
            None => bad.push(format!("{file}: room `{room}` has no row in the table")),
            Some(may) if !may.contains(&to) => {
                bad.push(format!("{file}: `{room}` imports `{to}`, which its row does not allow"))
            }
            _ => {}
        }
    }
    assert!(
        bad.is_empty(),
        "imports against docs/architecture.md's layer table:\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_the_simulator_reads_the_scenario_and_nothing_reads_the_simulator() {
    for (room, to, file) in arrows() {
        assert!(to != "sim" || room == "lib", "{file} imports crate::sim");
        assert!(
            to != "scenario" || matches!(room.as_str(), "sim" | "lib"),
            "{file} imports crate::scenario"
        );
    }
}

#[test]
fn the_simulator_names_no_remedy() {
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut files = Vec::new();
    rust_files(&sim, &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap().to_lowercase();
        for name in ["opet", "nred", "throttl"] {
            assert!(!text.contains(name), "{} names `{name}`", f.display());
        }
        // "fast-forward", "fast_forward", "quick exchange", ...
        let joined: String = text.chars().filter(|c| !matches!(c, '_' | '-' | ' ')).collect();
        for name in ["fastforward", "quickexchange"] {
            assert!(!joined.contains(name), "{} names `{name}`", f.display());
        }
    }
}

#[test]
fn the_scanner_sees_imports() {
    let a = arrows();
    let has = |room: &str, to: &str| a.iter().any(|(r, t, _)| r == room && t == to);
    // A `use crate::…` line, a `crate::…` path in code, and a `super::` that
    // climbs out of its room are all seen.
    assert!(has("sim", "link") && has("net", "mac") && has("scheme", "net"));
    assert!(!has("sim", "sim"));
    assert!(allowed().contains_key("sim"));
}
