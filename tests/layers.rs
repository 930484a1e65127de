//! The architecture's lines the crate graph cannot draw (docs/ARCHITECTURE.md).
//!
//! The compiler already keeps the core apart: it is its own crate (`crates/core`), which
//! depends on nothing of the app and on no web crate, so it cannot name `ui`, `charts`, `cli`,
//! `leptos` or `web_sys`. Inside the core and the app, this test reads every `.rs` file (the
//! core's as `core::…`, the name the app gives it), finds the paths each names (`use` lines and
//! inline `crate::…` / `super::…` paths, outside `#[cfg(test)]` modules, `tests.rs` files and
//! comments), resolves each to the module file it reaches, and fails on:
//!
//! 1. an import against the core's layer order: `base` ← `model`, `hardware` ← `calc` ←
//!    `sim` ← `scenario` ← `present` (each layer imports only the layers it stands on);
//! 2. `charts` naming `ui` or `cli`; `cli` naming `ui`; `ui` naming `cli`;
//! 3. an import cycle between core modules, or between UI files;
//! 4. the UI, the charts or the CLI reaching past a layer's face: they name
//!    `crate::core::<layer>::<Item>` (the items each layer's `mod.rs` re-exports), never a
//!    module inside a layer (`crate::core::calc::perf::…`).
//!
//! Test modules may import upward (a formula's test may parse a config): only the code that
//! ships is held to the order.

#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "common/source_files.rs"]
mod source_files;

/// The core's layers, bottom first, and the layers each may import.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &[]),
    ("model", &["base"]),
    ("hardware", &["base"]),
    ("calc", &["base", "model", "hardware"]),
    ("sim", &["base", "model", "hardware", "calc"]),
    ("scenario", &["base", "model", "hardware", "calc", "sim"]),
    (
        "present",
        &["base", "model", "hardware", "calc", "sim", "scenario"],
    ),
];

/// The parts of the crate above the core, and the parts each may not name.
const ABOVE: &[(&str, &[&str])] = &[
    ("charts", &["ui", "cli"]),
    ("cli", &["ui"]),
    ("ui", &["cli"]),
];

/// A module of the crate: its path (`["core", "calc", "kv"]`) and its source.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    code: String,
}

/// Every `.rs` file under `dir`, as modules of the crate whose root is `root`.
fn modules(root: &Path) -> Vec<Module> {
    source_files::rust_files(root)
        .into_iter()
        .filter_map(|file| {
            let rel = file.strip_prefix(root).ok()?.with_extension("");
            let mut path: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            if path.last().is_some_and(|l| l == "mod" || l == "lib") {
                path.pop();
            }
            if path.first().is_some_and(|f| f == "bin" || f == "main") {
                return None;
            }
            let text = std::fs::read_to_string(&file).ok()?;
            // A `tests.rs` is the body of a `#[cfg(test)] mod tests;` (tests/file_size.rs
            // checks the declaration): test code, like an inline `#[cfg(test)]` module.
            let code = if file.file_name().is_some_and(|n| n == "tests.rs") {
                String::new()
            } else {
                shipped_code(&text)
            };
            Some(Module { path, code, file })
        })
        .collect()
}

/// The source without comments, string literals and `#[cfg(test)]` items.
fn shipped_code(text: &str) -> String {
    let no_comments = strip_comments_and_strings(text);
    let mut out = String::with_capacity(no_comments.len());
    let mut rest = no_comments.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        // Skip the item: up to its first `{` and its matching `}`, or its `;`.
        let open = after.find('{');
        let semi = after.find(';');
        match (open, semi) {
            (Some(o), s) if s.is_none_or(|s| o < s) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (i, c) in after.char_indices().skip(o) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &after[end..];
            }
            (_, Some(s)) => rest = &after[s + 1..],
            _ => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// Blanks comments, string and char literals (paths inside them are not imports).
fn strip_comments_and_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            i += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|&c| c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            out.push_str("\"\"");
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            let rb = rest.as_bytes();
            while j < rb.len() && rb[j] != b'"' {
                j += if rb[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += (j + 1).min(rest.len());
        } else if rest.starts_with("'") && rest.len() > 2 {
            // A char literal ('a', '\n', '{'); a lifetime ('a) has no closing quote nearby.
            let rb = rest.as_bytes();
            let len = if rb[1] == b'\\' {
                rest[2..].find('\'').map(|e| e + 3)
            } else {
                let c = rest[1..].chars().next().map_or(1, char::len_utf8);
                (rest.as_bytes().get(1 + c) == Some(&b'\'')).then_some(c + 2)
            };
            match len {
                Some(l) => {
                    out.push_str("' '");
                    i += l;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Every path the code names from the crate root: `crate::a::b`, `super::x` (resolved against
/// `me`) and, in `use` lines, a child module's name; brace groups expanded.
fn named_paths(code: &str, me: &[String], is_dir_module: bool) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(ident(bytes[i - 1]) || bytes[i - 1] == b':');
        if starts_word {
            let rest = &code[i..];
            let base: Option<(Vec<String>, usize)> = if rest.starts_with("crate::") {
                Some((Vec::new(), "crate::".len()))
            } else if rest.starts_with("super::") {
                // The parent of a file module; a `mod.rs` module's own folder is itself.
                let mut parent = me.to_vec();
                let mut n = 0;
                let mut r = rest;
                while r.starts_with("super::") {
                    r = &r["super::".len()..];
                    n += "super::".len();
                    parent.pop();
                }
                Some((parent, n))
            } else {
                None
            };
            if let Some((prefix, skip)) = base {
                let (paths, used) = parse_tree(&code[i + skip..]);
                for p in paths {
                    let mut full = prefix.clone();
                    full.extend(p);
                    out.push(full);
                }
                i += skip + used;
                continue;
            }
            // `use child::…` / `pub use child::*` in a folder's mod.rs (or `self::child`).
            if let Some(r) = rest
                .strip_prefix("use ")
                .or_else(|| rest.strip_prefix("pub use "))
            {
                let r = r.trim_start();
                let r = r.strip_prefix("self::").unwrap_or(r);
                let (paths, _) = parse_tree(r);
                // A file module's `use x::…` names a sibling only through `super::`; a bare
                // name there is an external crate, so only a folder's mod.rs is read here.
                for p in paths.into_iter().filter(|_| is_dir_module) {
                    if p.len() > 1 && !matches!(p[0].as_str(), "crate" | "super" | "std" | "core") {
                        let mut full = me.to_vec();
                        full.extend(p);
                        out.push(full);
                    }
                }
            }
        }
        i += 1;
    }
    out
}

/// Parses `a::b::{c, d::e}` at the start of `s`: the expanded paths and the bytes read.
fn parse_tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut segs: Vec<String> = Vec::new();
    loop {
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'*') {
            i += 1;
        }
        if i > start {
            segs.push(s[start..i].to_string());
        }
        if s[i..].starts_with("::") {
            i += 2;
            if s[i..].starts_with('{') {
                // A group: split at top-level commas.
                let mut depth = 0usize;
                let mut j = i;
                let mut part_start = i + 1;
                let mut out = Vec::new();
                while j < b.len() {
                    match b[j] {
                        b'{' => depth += 1,
                        b'}' | b',' if depth == 1 => {
                            let (sub, _) = parse_tree(s[part_start..j].trim_start());
                            for p in sub {
                                let mut full = segs.clone();
                                full.extend(p);
                                out.push(full);
                            }
                            part_start = j + 1;
                            if b[j] == b'}' {
                                return (out, j + 1);
                            }
                        }
                        b'}' => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                return (out, j);
            }
            continue;
        }
        break;
    }
    let segs: Vec<String> = segs.into_iter().filter(|s| s != "self").collect();
    if segs.is_empty() {
        (Vec::new(), i)
    } else {
        (vec![segs], i)
    }
}

/// The module a path reaches: its longest prefix that is a module of the crate.
fn resolve<'a>(path: &[String], known: &'a BTreeSet<Vec<String>>) -> Option<&'a Vec<String>> {
    (1..=path.len()).rev().find_map(|n| known.get(&path[..n]))
}

/// Edges of the module graph: module → the modules its shipped code names.
fn edges(mods: &[Module]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let known: BTreeSet<Vec<String>> = mods.iter().map(|m| m.path.clone()).collect();
    let mut g = BTreeMap::new();
    for m in mods {
        let is_dir = m.file.file_stem().is_some_and(|s| s == "mod" || s == "lib");
        let targets: BTreeSet<Vec<String>> = named_paths(&m.code, &m.path, is_dir)
            .iter()
            .filter_map(|p| resolve(p, &known))
            .filter(|t| **t != m.path)
            .cloned()
            .collect();
        g.insert(m.path.clone(), targets);
    }
    g
}

/// Every rule broken, one sentence each.
fn violations(mods: &[Module]) -> Vec<String> {
    let g = edges(mods);
    let mut out = Vec::new();
    let layer_of = |p: &[String]| -> Option<String> {
        (p.first().map(String::as_str) == Some("core"))
            .then(|| p.get(1).cloned())
            .flatten()
    };
    for (from, tos) in &g {
        let Some(top) = from.first() else { continue };
        for to in tos {
            let to_top = to.first().map(String::as_str).unwrap_or("");
            if let Some((_, banned)) = ABOVE.iter().find(|(p, _)| p == top) {
                if banned.contains(&to_top) {
                    out.push(format!(
                        "{} imports {} ({top} never names {to_top})",
                        from.join("::"),
                        to.join("::")
                    ));
                }
            }
            if let (Some(fl), Some(tl)) = (layer_of(from), layer_of(to)) {
                if fl == tl {
                    continue;
                }
                let allowed = LAYERS
                    .iter()
                    .find(|(l, _)| *l == fl)
                    .map(|(_, a)| a.contains(&tl.as_str()))
                    .unwrap_or(false);
                if !allowed {
                    out.push(format!(
                        "{} imports {}: layer {fl} may not import layer {tl}",
                        from.join("::"),
                        to.join("::")
                    ));
                }
            }
        }
    }
    for (from, tos) in &g {
        if from.first().is_some_and(|f| f != "core") {
            for to in tos
                .iter()
                .filter(|t| t.first().is_some_and(|f| f == "core") && t.len() > 2)
            {
                out.push(format!(
                    "{} reaches {} past the {} layer's face",
                    from.join("::"),
                    to.join("::"),
                    to[1]
                ));
            }
        }
    }
    for group in ["core", "ui"] {
        for cycle in cycles(&g, group) {
            out.push(format!("import cycle in {group}: {}", cycle.join(" -> ")));
        }
    }
    out
}

/// The strongly connected groups of two or more modules (and self-loops) among the modules
/// under `top` (Tarjan's algorithm), each as its module names.
fn cycles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>, top: &str) -> Vec<Vec<String>> {
    let nodes: Vec<&Vec<String>> = g
        .keys()
        .filter(|k| k.first().is_some_and(|f| f == top))
        .collect();
    let index_of: BTreeMap<&Vec<String>, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let adj: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            g[*n]
                .iter()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    struct T {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], t: &mut T) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in &adj[v] {
            match t.index[w] {
                None => {
                    visit(w, adj, t);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let n = nodes.len();
    let mut t = T {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(v, &adj, &mut t);
        }
    }
    t.out
        .into_iter()
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|&i| nodes[i].join("::")).collect();
            names.sort();
            names
        })
        .collect()
}

/// The app's modules (`src/`), the core's (`crates/core/src/`, as `core::…`), the charts'
/// (`crates/charts/src/`, as `charts::…`) and the command
/// line's (`crates/cli/src/`, as `cli::…`), each crate's own `crate::` paths read as the app
/// names that crate (the command line names the core `crate::core` too).
fn all_modules() -> Vec<Module> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut mods = modules(&root.join("src"));
    for (name, dir) in [
        ("core", "crates/core/src"),
        ("charts", "crates/charts/src"),
        ("cli", "crates/cli/src"),
    ] {
        for mut m in modules(&root.join(dir)) {
            m.path.insert(0, name.to_string());
            m.code = m
                .code
                .replace("crate::core::", "\0")
                .replace("crate::", &format!("crate::{name}::"))
                .replace('\0', "crate::core::");
            mods.push(m);
        }
    }
    mods
}

#[test]
fn imports_follow_the_layers_and_form_no_cycle() {
    let mods = all_modules();
    assert!(mods.len() > 50, "read only {} modules", mods.len());
    let v = violations(&mods);
    assert!(v.is_empty(), "{} violation(s):\n{}", v.len(), v.join("\n"));
}

#[test]
fn every_core_module_sits_in_a_layer() {
    for m in all_modules() {
        if m.path.first().is_some_and(|f| f == "core") && m.path.len() > 1 {
            let layer = &m.path[1];
            assert!(
                LAYERS.iter().any(|(l, _)| l == layer),
                "{} is outside the layers {:?}",
                m.file.display(),
                LAYERS.iter().map(|(l, _)| *l).collect::<Vec<_>>()
            );
        }
    }
}

/// The checker itself: a planted upward import, a cycle and a brace group are each caught.
#[test]
fn the_checker_catches_planted_violations() {
    let module = |path: &str, file: &str, code: &str| Module {
        path: path.split("::").map(String::from).collect(),
        file: PathBuf::from(file),
        code: shipped_code(code),
    };
    let clean = || {
        vec![
            module("core", "core/mod.rs", "pub mod base; pub mod calc;"),
            module(
                "core::base",
                "core/base/mod.rs",
                "pub mod units; pub mod error;",
            ),
            module(
                "core::base::units",
                "core/base/units.rs",
                "pub struct Bytes;",
            ),
            module(
                "core::base::error",
                "core/base/error.rs",
                "use crate::core::base::units::Bytes; // crate::core::calc::kv in a comment\n\
                 const S: &str = \"crate::core::calc::kv in a string\";",
            ),
            module("core::calc", "core/calc/mod.rs", "pub mod kv;"),
            module(
                "core::calc::kv",
                "core/calc/kv.rs",
                "use crate::core::base::{error::E, units::Bytes};\n\
                 #[cfg(test)]\nmod tests { use crate::core::present::report; }",
            ),
            module("ui::a", "ui/a.rs", "use super::b::B;"),
            module("ui::b", "ui/b.rs", "pub struct B;"),
        ]
    };
    assert_eq!(violations(&clean()), Vec::<String>::new());

    // An upward import inside a brace group.
    let mut m = clean();
    m[3] = module(
        "core::base::error",
        "core/base/error.rs",
        "use crate::core::{calc::kv, base::units};",
    );
    let v = violations(&m);
    assert!(
        v.iter()
            .any(|s| s.contains("layer base may not import layer calc")),
        "{v:?}"
    );

    // An inline path, no `use`.
    let mut m = clean();
    m[2] = module(
        "core::base::units",
        "core/base/units.rs",
        "fn f() { crate::core::calc::kv::x(); }",
    );
    assert!(!violations(&m).is_empty());

    // A cycle inside one layer.
    let mut m = clean();
    m[2] = module(
        "core::base::units",
        "core/base/units.rs",
        "use crate::core::base::error::E;",
    );
    let v = violations(&m);
    assert!(
        v.iter().any(|s| s.starts_with("import cycle in core")),
        "{v:?}"
    );

    // A cycle between UI files through `super::`.
    let mut m = clean();
    m[7] = module("ui::b", "ui/b.rs", "use super::a::f;");
    let v = violations(&m);
    assert!(
        v.iter().any(|s| s.starts_with("import cycle in ui")),
        "{v:?}"
    );

    // The UI reaching past a layer's face into one of its modules.
    let mut m = clean();
    m[6] = module("ui::a", "ui/a.rs", "use crate::core::calc::kv::per_token;");
    let v = violations(&m);
    assert!(
        v.iter().any(|s| s.contains("past the calc layer's face")),
        "{v:?}"
    );
}

/// The core's manifest names no web crate and nothing of the app (so the compiler refuses
/// them in its code): it compiles natively for the CLI and the tests.
#[test]
fn the_core_depends_on_no_web_crate() {
    const WEB: &[&str] = &[
        "leptos",
        "web-sys",
        "wasm-bindgen",
        "js-sys",
        "gloo",
        "plotters",
        "llm-serving-calculator",
    ];
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/Cargo.toml");
    let manifest = std::fs::read_to_string(&path).expect("crates/core/Cargo.toml");
    let named: Vec<&str> = manifest
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| WEB.iter().find(|w| l.trim_start().starts_with(*w)).copied())
        .collect();
    assert!(named.is_empty(), "crates/core/Cargo.toml names {named:?}");
}
