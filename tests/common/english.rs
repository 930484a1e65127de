//! The snapshots' text with the translation keys it prints rendered in English: a `Phrase`'s
//! `Debug` form (`Tr("key", [("name", Verbatim("1"))])`) becomes its English sentence, and a
//! bare key (`title_key: "perf_ttft"`, `"detail": "ldg_…"`) is followed by its English row,
//! so a reviewer reads what a user reads.

use llm_serving_calculator::core::base::i18n::{fill, has, tr, Lang};

/// `text` with every phrase and key rendered in English (see the module doc).
pub fn english(text: &str) -> String {
    annotate_keys(&render_phrases(text))
}

/// Replaces each `Tr(…)` in `Debug` form by `"English sentence" (key)`.
fn render_phrases(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let starts = rest.starts_with("Tr(")
            && !text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if starts {
            if let Some((key, english, used)) = tr_phrase(rest) {
                out.push_str(&format!("{english:?} ({key})"));
                i += used;
                continue;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Follows each string literal that is a translation key (in a value's place, not a JSON
/// field name) by ` = "its English row"`.
fn annotate_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        let Some(close) = literal_end(after) else {
            out.push_str(after);
            return out;
        };
        let body = &after[..close];
        out.push_str(body);
        out.push('"');
        // A JSON object's field name (`"kv_per_token": …`) is a name, not a phrase.
        let field_name = after[close + 1..].trim_start().starts_with(':');
        let is_key = !field_name
            && body.contains('_')
            && body
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && has(body);
        if is_key {
            out.push_str(&format!(" = {:?}", tr(Lang::En, body)));
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Where the literal whose body starts `s` closes (an unescaped `"`).
fn literal_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return Some(i),
            _ => {}
        }
    }
    None
}

/// A cursor over the `Debug` text of a phrase.
struct Cursor<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        let rest = &self.s[self.i..];
        self.i += rest.len() - rest.trim_start().len();
    }

    /// Takes `tok` (after white space), or fails.
    fn eat(&mut self, tok: &str) -> Option<()> {
        self.ws();
        self.s[self.i..]
            .starts_with(tok)
            .then(|| self.i += tok.len())
    }

    /// Takes `tok` if it is next.
    fn maybe(&mut self, tok: &str) {
        let _ = self.eat(tok);
    }

    /// A string literal in `Debug` form, unescaped.
    fn string(&mut self) -> Option<String> {
        self.eat("\"")?;
        let body = &self.s[self.i..];
        let end = literal_end(body)?;
        self.i += end + 1;
        let mut out = String::new();
        let mut chars = body[..end].chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'u' => {
                    let hex: String = chars.by_ref().skip(1).take_while(|c| *c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            }
        }
        Some(out)
    }

    /// A phrase (`Tr`, `Verbatim` or `List`) as English text, with its key for a `Tr`.
    fn phrase(&mut self) -> Option<(Option<String>, String)> {
        self.ws();
        let rest = &self.s[self.i..];
        if rest.starts_with("Tr(") {
            self.i += 3;
            let key = self.string()?;
            self.eat(",")?;
            self.eat("[")?;
            let mut vals: Vec<(String, String)> = Vec::new();
            while self.eat("]").is_none() {
                self.eat("(")?;
                let name = self.string()?;
                self.eat(",")?;
                let (_, v) = self.phrase()?;
                self.maybe(",");
                self.eat(")")?;
                self.maybe(",");
                vals.push((name, v));
            }
            self.maybe(",");
            self.eat(")")?;
            let pairs: Vec<(&str, &str)> =
                vals.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            let text = fill(tr(Lang::En, &key), &pairs);
            Some((Some(key), text))
        } else if rest.starts_with("Verbatim(") {
            self.i += "Verbatim(".len();
            let s = self.string()?;
            self.maybe(",");
            self.eat(")")?;
            Some((None, s))
        } else if rest.starts_with("List(") {
            self.i += "List(".len();
            self.eat("[")?;
            let mut items = Vec::new();
            while self.eat("]").is_none() {
                items.push(self.phrase()?.1);
                self.maybe(",");
            }
            self.maybe(",");
            self.eat(")")?;
            Some((None, items.join(", ")))
        } else {
            None
        }
    }
}

/// The `Tr(…)` at the start of `s`: its key, its English text and the bytes it spans (a
/// trailing comma stays in the text).
fn tr_phrase(s: &str) -> Option<(String, String, usize)> {
    let mut c = Cursor { s, i: 0 };
    let (key, text) = c.phrase()?;
    Some((key?, text, c.i))
}
