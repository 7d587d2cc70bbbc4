//! The structure drawn from the imports: no circle between files, no arrow that runs back up a
//! layer, and no type name defined twice in the library.
//!
//! The graph is read from the text of `src/**/*.rs` (comments and string literals stripped), not
//! from the compiler: an arrow runs from a file to the file that defines what one of its paths
//! names. A path is a `use` tree's leaf or a path in code, starting with `crate::`, `super::`,
//! `self::`, a child module of the file (a file beneath it, its `mod` line written or generated
//! by a registry's macro), a name a `use` of the file brought in, or a `#[macro_export]` macro's
//! name (`sayln!`). A path resolves to the longest prefix of it that
//! is a file (`src/a/b.rs` or `src/a/b/mod.rs`); when the next name after that prefix is one the
//! file brings in with a `use` (a re-export in a `mod.rs` above all), the path is followed on to
//! where that name comes from, so a child's `super::Item` names the sibling that defines `Item`
//! rather than its parent. What we chose, kept simple:
//!
//! - a `mod.rs`'s `pub use child::Item` is an arrow from the `mod.rs` to the child (the parent
//!   depends on the child); `mod child;` alone is no arrow;
//! - `src/lib.rs`'s re-exports are no arrows (it is the top); a path through one resolves on to
//!   the defining file;
//! - `src/main.rs` is another crate (it names `ctxlab::`, not `crate::`) and is left out;
//! - a glob (`use super::*`) names the module itself; an inline `mod tests { .. }` is part of its
//!   file, so its `super::` is the file.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The layers, bottom to top: a file may import files of its own layer or lower ones only.
/// Each file belongs to the layer of the longest module prefix that names it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "error",
            "quote",
            "text",
            "rng",
            "strict_json",
            "links",
            "output_file",
            "stats",
        ],
    ),
    ("model calls", &["llm"]),
    ("histories and their costs", &["history", "cost"]),
    ("spec syntax", &["spec"]),
    ("context and view", &["context", "view"]),
    (
        "noise, strategies, summarisers",
        &["noise", "strategy", "summariser"],
    ),
    ("metrics and flags", &["metrics", "stale", "flags"]),
    ("session", &["session"]),
    // The table formats (their names, files and writers) are read by experiment files; the
    // tables above implement what a format reads of a table (`formats::Rows`).
    ("table formats", &["formats"]),
    ("experiment files", &["experiment"]),
    ("the two kinds of sweep", &["cells", "sessions"]),
    ("tables", &["tables"]),
    ("judged summaries", &["summaries_judge"]),
    ("figures", &["figures"]),
    ("sweep", &["sweep"]),
    ("report", &["report"]),
    (
        "calibration",
        &[
            "calibrate",
            "calibrate_cache",
            "calibrate_prefix",
            "calibrate_rereads",
            "calibrate_stale_tasks",
            "calibrate_summaries",
        ],
    ),
    ("cli", &["cli"]),
    ("lib", &[""]),
];

/// Files whose circles and arrows back up are excused: a circle when every file in it is
/// listed here, an arrow when both its ends are. Empty, and meant to stay so.
const KNOWN_EXCEPTIONS: &[&str] = &[];

/// The mark a `macro_rules!` body leaves on the brace stack in place of a module's name.
const MACRO: &str = "macro_rules!";

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Punct(char),
}

/// The tokens of a Rust source, without comments, string and character literals or lifetimes.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied().unwrap_or(' ');
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i);
        } else if ch == '\'' {
            if next == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                // A lifetime or a label.
                i += 1;
                while i < c.len() && ident(c[i]) {
                    i += 1;
                }
            }
        } else if ident(ch) {
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let at = c.get(i).copied().unwrap_or(' ');
            let raw = (word == "r" || word == "br") && (at == '"' || at == '#');
            if raw && (at == '"' || c[i..].iter().find(|&&x| x != '#') == Some(&'"')) {
                let mut hashes = 0;
                while c[i] == '#' {
                    hashes += 1;
                    i += 1;
                }
                i += 1;
                loop {
                    if c[i] == '"' && (0..hashes).all(|h| c.get(i + 1 + h) == Some(&'#')) {
                        i += 1 + hashes;
                        break;
                    }
                    i += 1;
                }
            } else if word == "b" && (at == '"' || at == '\'') {
                if at == '"' {
                    i = skip_string(&c, i);
                } else {
                    i += 1;
                    while c[i] != '\'' {
                        i += if c[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
            } else if word == "r" && at == '#' {
                // A raw identifier: `r#type`.
                i += 1;
            } else if !word.starts_with(|d: char| d.is_ascii_digit()) {
                out.push(Tok::Ident(word));
            }
        } else if ch == ':' && next == ':' {
            out.push(Tok::Colons);
            i += 2;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// The index after the string literal opening at `i`.
fn skip_string(c: &[char], mut i: usize) -> usize {
    i += 1;
    while i < c.len() && c[i] != '"' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

fn is(t: Option<&Tok>, word: &str) -> bool {
    matches!(t, Some(Tok::Ident(w)) if w == word)
}

/// A leaf of a `use` tree: its path, the name it binds, and whether it is a glob.
struct UseLeaf {
    path: Vec<String>,
    name: Option<String>,
    glob: bool,
}

/// Reads one `use` tree at `t[*i]`, adding its leaves to `out`.
fn use_tree(t: &[Tok], i: &mut usize, mut path: Vec<String>, out: &mut Vec<UseLeaf>) {
    loop {
        match t.get(*i) {
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                *i += 1;
                if t.get(*i) == Some(&Tok::Colons) {
                    *i += 1;
                    continue;
                }
                let mut name = path.last().cloned();
                if path.last().map(String::as_str) == Some("self") {
                    path.pop();
                    name = path.last().cloned();
                }
                if is(t.get(*i), "as") {
                    name = match t.get(*i + 1) {
                        Some(Tok::Ident(n)) if n != "_" => Some(n.clone()),
                        _ => None,
                    };
                    *i += 2;
                }
                out.push(UseLeaf {
                    path,
                    name,
                    glob: false,
                });
                return;
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push(UseLeaf {
                    path,
                    name: None,
                    glob: true,
                });
                return;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match t.get(*i) {
                        Some(Tok::Punct('}')) | None => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        _ => use_tree(t, i, path.clone(), out),
                    }
                }
            }
            Some(Tok::Colons) => *i += 1,
            _ => return,
        }
    }
}

/// What one file says: its uses, the paths in its code, its child modules, its macros and its
/// module-level type definitions.
#[derive(Default)]
struct FileFacts {
    /// (module the use is in, leaf, whether it is a `pub use`).
    uses: Vec<(Vec<String>, UseLeaf, bool)>,
    /// (module the path is in, path).
    paths: Vec<(Vec<String>, Vec<String>)>,
    children: BTreeSet<String>,
    exported_macros: Vec<String>,
    /// (name, whether it is inside an inline `mod tests`).
    types: Vec<(String, bool)>,
}

fn read_file(module: &[String], src: &str) -> FileFacts {
    let t = tokens(src);
    let mut f = FileFacts::default();
    // One entry per open brace: the inline module it opens, if it does.
    let mut braces: Vec<Option<String>> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < t.len() {
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(braces.iter().flatten().cloned())
            .collect();
        let at_module_level = braces.iter().all(Option::is_some);
        match &t[i] {
            Tok::Punct('{') => {
                // An arm's body in a `macro_rules!` is read as module level, so the types a
                // macro defines are seen (`=>` reads as `=` then `>`).
                let arm = i >= 2
                    && t[i - 2] == Tok::Punct('=')
                    && t[i - 1] == Tok::Punct('>')
                    && braces.last() == Some(&Some(MACRO.to_string()));
                braces.push(if arm {
                    Some(MACRO.to_string())
                } else {
                    pending_mod.take()
                });
                i += 1;
            }
            Tok::Punct('}') => {
                braces.pop();
                i += 1;
            }
            Tok::Punct(';') => {
                pending_mod = None;
                i += 1;
            }
            Tok::Ident(w) if w == "mod" && i + 1 < t.len() => {
                if let Tok::Ident(name) = &t[i + 1] {
                    if t.get(i + 2) == Some(&Tok::Punct(';')) && braces.is_empty() {
                        f.children.insert(name.clone());
                    } else {
                        pending_mod = Some(name.clone());
                    }
                }
                i += 2;
            }
            Tok::Ident(w) if w == "macro_rules" => {
                let exported = (i.saturating_sub(12)..i).any(|k| is(t.get(k), "macro_export"));
                if let (true, Some(Tok::Ident(name))) = (exported, t.get(i + 2)) {
                    f.exported_macros.push(name.clone());
                }
                // Its outer brace: the arms' bodies inside it are read as module level.
                pending_mod = Some(MACRO.to_string());
                i += 3;
            }
            Tok::Ident(w)
                if at_module_level
                    && ["struct", "enum", "type", "trait", "union"].contains(&w.as_str())
                    && i > 0
                    && t[i - 1] != Tok::Colons =>
            {
                if let Some(Tok::Ident(name)) = t.get(i + 1) {
                    if !(w == "union" && t.get(i + 2) == Some(&Tok::Colons)) {
                        let in_tests = braces.iter().flatten().any(|m| m == "tests");
                        f.types.push((name.clone(), in_tests));
                    }
                }
                i += 2;
            }
            Tok::Ident(w) if w == "use" => {
                let public = i > 0
                    && (is(t.get(i - 1), "pub")
                        || (t[i - 1] == Tok::Punct(')') && {
                            let open = (0..i).rev().find(|&k| t[k] == Tok::Punct('('));
                            open.is_some_and(|k| k > 0 && is(t.get(k - 1), "pub"))
                        }));
                i += 1;
                let mut leaves = Vec::new();
                use_tree(&t, &mut i, Vec::new(), &mut leaves);
                for leaf in leaves {
                    f.uses.push((here.clone(), leaf, public));
                }
            }
            Tok::Ident(first) => {
                let after_colons = i > 0 && t[i - 1] == Tok::Colons;
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while t.get(j) == Some(&Tok::Colons) {
                    match t.get(j + 1) {
                        Some(Tok::Ident(s)) => {
                            path.push(s.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                let is_macro = t.get(j) == Some(&Tok::Punct('!'));
                if !after_colons && (path.len() > 1 || is_macro) {
                    f.paths.push((here.clone(), path));
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
    f
}

/// Every library file under `src/` (not `main.rs`), by module path.
struct Crate {
    files: BTreeMap<Vec<String>, (PathBuf, FileFacts)>,
    /// A `#[macro_export]` macro's name → the module that defines it.
    macros: HashMap<String, Vec<String>>,
}

fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut m: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if m.last().map(String::as_str) == Some("mod") || m == ["lib"] {
        m.pop();
    }
    m
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

fn read_crate(src: &Path) -> Crate {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    let mut files = BTreeMap::new();
    let mut macros = HashMap::new();
    for p in paths {
        if p == src.join("main.rs") {
            continue;
        }
        let module = module_of(src, &p);
        let facts = read_file(&module, &std::fs::read_to_string(&p).unwrap());
        for m in &facts.exported_macros {
            macros.insert(m.clone(), module.clone());
        }
        files.insert(module, (p, facts));
    }
    // A file beneath a module is its child whether its `mod` line is written or generated by a
    // registry's macro (`strategies!`, `table_formats!`, `caches!`).
    let modules: Vec<Vec<String>> = files.keys().cloned().collect();
    for child in modules.iter().filter(|m| !m.is_empty()) {
        let parent = &child[..child.len() - 1];
        if let Some((_, facts)) = files.get_mut(parent) {
            facts.children.insert(child[child.len() - 1].clone());
        }
    }
    Crate { files, macros }
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("/")
    }
}

impl Crate {
    /// The absolute module path `path` (written in `module` of file `file`) names, if it names
    /// one of the crate's.
    fn absolute(&self, file: &[String], module: &[String], path: &[String]) -> Option<Vec<String>> {
        self.absolute_at(file, module, path, 0)
    }

    fn absolute_at(
        &self,
        file: &[String],
        module: &[String],
        path: &[String],
        depth: usize,
    ) -> Option<Vec<String>> {
        let facts = &self.files[file].1;
        let first = path.first()?.as_str();
        let rest = |n: usize| path[n..].to_vec();
        match first {
            "crate" => Some(rest(1)),
            "self" => Some([module.to_vec(), rest(1)].concat()),
            "super" => {
                let mut m = module.to_vec();
                let mut n = 0;
                while path.get(n).map(String::as_str) == Some("super") {
                    m.pop()?;
                    n += 1;
                }
                Some([m, rest(n)].concat())
            }
            _ if module == file && facts.children.contains(first) => {
                Some([file.to_vec(), path.to_vec()].concat())
            }
            _ => {
                // A name a `use` of this file brought in (a module, or an item).
                let leaf = facts.uses.iter().find(|(m, leaf, _)| {
                    !leaf.glob && leaf.name.as_deref() == Some(first) && m.starts_with(file)
                });
                if let Some((m, leaf, _)) = leaf {
                    if depth < 8 {
                        let base = self.absolute_at(file, m, &leaf.path, depth + 1)?;
                        return Some([base, rest(1)].concat());
                    }
                }
                if path.len() == 1 {
                    return self
                        .macros
                        .get(first)
                        .map(|m| [m.clone(), rest(0)].concat());
                }
                None
            }
        }
    }

    /// The file that defines what the absolute path names.
    fn resolve(&self, abs: &[String], depth: usize) -> Vec<String> {
        let k = (0..=abs.len())
            .rev()
            .find(|&k| self.files.contains_key(&abs[..k]))
            .unwrap_or(0);
        let file = abs[..k].to_vec();
        if k == 0 && abs.len() == 1 {
            // `crate::refuse!`: an exported macro lives at the crate's root, made in its file.
            if let Some(m) = self.macros.get(&abs[0]) {
                return m.clone();
            }
        }
        if k < abs.len() && depth < 16 {
            let next = &abs[k];
            let facts = &self.files[&file].1;
            let leaf = facts
                .uses
                .iter()
                .find(|(m, leaf, _)| *m == file && leaf.name.as_deref() == Some(next.as_str()));
            if let Some((m, leaf, _)) = leaf {
                if let Some(target) = self.absolute(&file, m, &leaf.path) {
                    return self.resolve(&[target, abs[k + 1..].to_vec()].concat(), depth + 1);
                }
            }
        }
        file
    }

    /// Every arrow between two files, with one path that draws it.
    fn arrows(&self) -> BTreeMap<(Vec<String>, Vec<String>), String> {
        let mut arrows = BTreeMap::new();
        for (file, (_, facts)) in &self.files {
            let uses = facts.uses.iter().filter_map(|(m, leaf, public)| {
                // lib.rs's re-exports are no arrows.
                (!(file.is_empty() && *public)).then_some((m, &leaf.path))
            });
            let paths = facts.paths.iter().map(|(m, p)| (m, p));
            for (m, path) in uses.chain(paths) {
                let Some(abs) = self.absolute(file, m, path) else {
                    continue;
                };
                let to = self.resolve(&abs, 0);
                if &to != file {
                    arrows
                        .entry((file.clone(), to))
                        .or_insert_with(|| path.join("::"));
                }
            }
        }
        arrows
    }
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(
    nodes: &[Vec<String>],
    arrows: &BTreeSet<(Vec<String>, Vec<String>)>,
) -> Vec<Vec<String>> {
    struct State<'a> {
        out: HashMap<&'a [String], Vec<&'a [String]>>,
        index: HashMap<&'a [String], usize>,
        low: HashMap<&'a [String], usize>,
        stack: Vec<&'a [String]>,
        on_stack: BTreeSet<&'a [String]>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a [String]) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.out.get(v).cloned().unwrap_or_default() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(show(w));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        out: HashMap::new(),
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for (a, b) in arrows {
        s.out.entry(a.as_slice()).or_default().push(b.as_slice());
    }
    for v in nodes {
        if !s.index.contains_key(v.as_slice()) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

/// The layer of a module: the longest prefix in [`LAYERS`] that names it.
fn layer(module: &[String]) -> Option<usize> {
    let name = module.join("::");
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(n, (_, prefixes))| prefixes.iter().map(move |p| (n, *p)))
        .filter(|(_, p)| {
            p.is_empty() && name.is_empty()
                || !p.is_empty() && (name == *p || name.starts_with(&format!("{p}::")))
        })
        .max_by_key(|(_, p)| p.len())
        .map(|(n, _)| n)
}

fn excused(files: &[String]) -> bool {
    files.iter().all(|f| KNOWN_EXCEPTIONS.contains(&f.as_str()))
}

fn library() -> Crate {
    read_crate(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn no_circle_between_files() {
    let lib = library();
    let arrows = lib.arrows();
    let nodes: Vec<Vec<String>> = lib.files.keys().cloned().collect();
    // A file leaning on a module file above it (`super::Fill`, the trait it implements) is part of
    // that module: the circle a module and its own files make through the module's registry or
    // re-exports is no circle here (the layers still see those arrows).
    let across: BTreeSet<_> = arrows
        .keys()
        .filter(|(a, b)| !(a.starts_with(b) && a.len() > b.len()))
        .cloned()
        .collect();
    let found = circles(&nodes, &across);
    let mut report = String::new();
    for c in found.iter().filter(|c| !excused(c)) {
        report += &format!("circle: {}\n", c.join(" <-> "));
        for ((a, b), why) in &arrows {
            if c.contains(&show(a))
                && c.contains(&show(b))
                && across.contains(&(a.clone(), b.clone()))
            {
                report += &format!("    {} -> {} ({why})\n", show(a), show(b));
            }
        }
    }
    assert!(report.is_empty(), "{report}");
}

#[test]
fn no_arrow_runs_back_up() {
    let lib = library();
    let mut report = String::new();
    for file in lib.files.keys() {
        if layer(file).is_none() {
            report += &format!("{}: in no layer\n", show(file));
        }
    }
    for ((a, b), why) in lib.arrows() {
        let (Some(la), Some(lb)) = (layer(&a), layer(&b)) else {
            continue;
        };
        if lb > la && !excused(&[show(&a), show(&b)]) {
            report += &format!(
                "{} ({}) -> {} ({}): {why}\n",
                show(&a),
                LAYERS[la].0,
                show(&b),
                LAYERS[lb].0
            );
        }
    }
    assert!(report.is_empty(), "{report}");
}

/// The layers as `src/lib.rs` and `docs/library.md` list them: one numbered line per layer,
/// bottom to top, its modules in code spans.
fn layer_lines() -> Vec<String> {
    LAYERS
        .iter()
        .filter(|(name, _)| *name != "lib")
        .enumerate()
        .map(|(i, (name, modules))| {
            let modules: Vec<String> = modules.iter().map(|m| format!("`{m}`")).collect();
            format!("{}. {name}: {}", i + 1, modules.join(", "))
        })
        .collect()
}

/// The numbered lines of `text` (after `prefix`, `//! ` in a doc comment).
fn numbered_lines(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter(|l| {
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && l[digits..].starts_with(". ")
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn lib_rs_and_the_guide_list_the_layers_this_test_checks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let want = layer_lines();
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let guide = std::fs::read_to_string(root.join("docs/library.md")).unwrap();
    let listed = [
        ("src/lib.rs", numbered_lines(&lib, "//! ")),
        ("docs/library.md", numbered_lines(&guide, "")),
    ];
    for (file, got) in listed {
        assert_eq!(
            got,
            want,
            "{file} lists other layers than LAYERS; the list, as it should read:\n{}",
            want.join("\n")
        );
    }
}

#[test]
fn no_type_name_defined_twice() {
    let lib = library();
    let mut defined: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (module, (_, facts)) in &lib.files {
        for (name, in_tests) in &facts.types {
            if !in_tests {
                defined.entry(name).or_default().push(show(module));
            }
        }
    }
    let twice: Vec<String> = defined
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "{} names:\n{}",
        twice.len(),
        twice.join("\n")
    );
}

#[test]
fn the_reader_sees_what_it_should() {
    // A path in code, a child's `super::Item` through its parent's re-export (to the sibling
    // that defines it), a `crate::` macro (to the file that makes it), and an inline test
    // module's `use super::*` (its own file).
    let lib = library();
    let arrows = lib.arrows();
    let has = |a: &str, b: &str| arrows.keys().any(|(x, y)| show(x) == a && show(y) == b);
    assert!(
        has("error", "quote"),
        "error.rs names crate::quote::cut_long"
    );
    assert!(
        has("strategy/codex_compact", "strategy/summary_rule"),
        "super::Summary…"
    );
    assert!(has("sweep/folder", "error"), "refuse! is made in error.rs");
    assert!(!has("strategy/codex_compact", "strategy") && !has("text", "lib"));
    assert!(lib.files.len() > 100);
    // A type a `macro_rules!` arm defines is seen where the macro is written.
    let defines = |file: &str, name: &str| {
        lib.files
            .iter()
            .any(|(m, (_, f))| show(m) == file && f.types.iter().any(|(t, _)| t == name))
    };
    assert!(defines("formats", "TableFormat"));
    assert!(defines("strategy", "Strategy") || defines("strategy", "Rule"));
}

/// Prints every arrow, for reading the structure: `cargo test --release structure::print -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_arrows() {
    for ((a, b), why) in library().arrows() {
        println!("{} -> {} ({why})", show(&a), show(&b));
    }
}
