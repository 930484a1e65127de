//! A tiny RFC 4180 CSV reader for the compiled-in data files.
//!
//! Supports quoted fields with commas, line breaks and doubled quotes (`""`) inside quotes,
//! `\n` or `\r\n` record ends, an optional UTF-8 byte-order mark, and skips empty lines.
//! Pure: text in, records out; no I/O.

use crate::base::error::CalcError;

/// One parsed record: its 1-based line number in the text and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The 1-based line on which the record starts.
    pub line: usize,
    /// The fields, unquoted.
    pub fields: Vec<String>,
}

/// Parses CSV text into records (the header, if any, is the first record).
///
/// Errors name the line: an unterminated quoted field, or a stray quote after a closing quote
/// or inside an unquoted field.
pub fn parse(text: &str) -> Result<Vec<Record>, CalcError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut line = 1usize;
    let mut start_line = 1usize;
    // Whether the current field began with a quote, is inside quotes, or just closed them.
    let mut quoted = false;
    let mut in_quotes = false;
    let mut closed = false;
    // Whether the current record had any quoted field (so `""` alone is not an empty line).
    let mut record_quoted = false;
    let mut chars = text.chars().peekable();
    let bad = |line: usize, detail: &str| CalcError::BadData {
        row: line,
        column: String::from("(csv)"),
        detail: detail.to_string(),
    };
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => {
                    in_quotes = false;
                    closed = true;
                }
                '\n' => {
                    line += 1;
                    field.push('\n');
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            ',' => {
                fields.push(std::mem::take(&mut field));
                quoted = false;
                closed = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                push_record(
                    &mut records,
                    start_line,
                    std::mem::take(&mut fields),
                    record_quoted,
                );
                record_quoted = false;
                quoted = false;
                closed = false;
                line += 1;
                start_line = line;
            }
            '"' if field.is_empty() && !quoted => {
                quoted = true;
                in_quotes = true;
                record_quoted = true;
            }
            '"' => {
                return Err(bad(
                    line,
                    "a quote inside an unquoted field or after a closing quote",
                ))
            }
            _ if closed => {
                return Err(bad(
                    line,
                    "text after a closing quote; a quoted field must end at a comma or line end",
                ))
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(bad(start_line, "a quoted field is never closed"));
    }
    if !field.is_empty() || !fields.is_empty() || quoted {
        fields.push(field);
        push_record(&mut records, start_line, fields, record_quoted);
    }
    Ok(records)
}

/// Adds a record unless it is an empty line (one empty, unquoted field).
fn push_record(records: &mut Vec<Record>, line: usize, fields: Vec<String>, quoted: bool) {
    let empty = !quoted && fields.len() == 1 && fields.first().is_some_and(|f| f.is_empty());
    if !empty {
        records.push(Record { line, fields });
    }
}

/// One column of a projection: its name in the projected file, the full file's column it
/// comes from, and how a field is mapped.
#[cfg(test)]
pub type Column<'a> = (&'a str, &'a str, fn(&str) -> &str);

/// The records of `full` projected on `columns` (each field mapped by its column's function),
/// header first: the check that a compiled-in `*.app.csv` equals
/// the projection of its sourced file. Panics on a column `full` lacks (tests only).
#[cfg(test)]
pub fn project(full: &str, columns: &[Column]) -> Vec<Record> {
    let recs = parse(full).unwrap_or_else(|e| panic!("{e}"));
    let Some((header, data)) = recs.split_first() else {
        return Vec::new();
    };
    let idx: Vec<usize> = columns
        .iter()
        .map(|(_, from, _)| {
            header
                .fields
                .iter()
                .position(|h| h == from)
                .unwrap_or_else(|| panic!("no column {from}"))
        })
        .collect();
    let head = Record {
        line: header.line,
        fields: columns.iter().map(|(to, _, _)| to.to_string()).collect(),
    };
    let rows = data.iter().map(|r| Record {
        line: r.line,
        fields: idx
            .iter()
            .zip(columns)
            .map(|(i, (_, _, map))| map(r.fields.get(*i).map_or("", |s| s.as_str())).to_string())
            .collect(),
    });
    std::iter::once(head).chain(rows).collect()
}

/// RFC 4180 text of records, one per line (a field quoted when it holds a comma, quote or line
/// break), for regenerating a projected data file.
#[cfg(test)]
pub fn write(records: &[Record]) -> String {
    let field = |f: &String| {
        if f.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", f.replace('"', "\"\""))
        } else {
            f.clone()
        }
    };
    records
        .iter()
        .map(|r| r.fields.iter().map(field).collect::<Vec<_>>().join(",") + "\n")
        .collect()
}

/// Fails unless the compiled-in `app` text parses to `want` (same fields on the same lines);
/// with the environment variable `REGENERATE_APP_CSV` set, first rewrites `path` (relative to
/// the crate) from `want`.
#[cfg(test)]
pub fn check_projection(app: &str, want: &[Record], path: &str) {
    if std::env::var_os("REGENERATE_APP_CSV").is_some() {
        let file = format!("{}/{path}", concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        std::fs::write(file, write(want)).unwrap_or_else(|e| panic!("{e}"));
    }
    let got = parse(app).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        got, want,
        "{path} is stale: run REGENERATE_APP_CSV=1 cargo test --lib app_csv, then cargo test again"
    );
    // The writer round-trips through the reader.
    let round: Vec<Vec<String>> = parse(&write(want))
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|r| r.fields)
        .collect();
    let fields: Vec<Vec<String>> = want.iter().map(|r| r.fields.clone()).collect();
    assert_eq!(round, fields);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Vec<Vec<String>> {
        match parse(text) {
            Ok(r) => r.into_iter().map(|r| r.fields).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn plain_quoted_commas_and_doubled_quotes() {
        let got = fields("a,b,c\n1,\"x, y\",\"say \"\"hi\"\"\"\n");
        assert_eq!(
            got,
            vec![vec!["a", "b", "c"], vec!["1", "x, y", "say \"hi\""]]
        );
    }

    #[test]
    fn crlf_bom_blank_lines_and_no_final_newline() {
        let got = fields("\u{feff}a,b\r\n\r\n1,2\r\n3,");
        assert_eq!(got, vec![vec!["a", "b"], vec!["1", "2"], vec!["3", ""]]);
    }

    #[test]
    fn newline_inside_quotes_and_line_numbers() {
        let recs = parse("h\n\"two\nlines\"\nnext\n").unwrap_or_default();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1].fields, vec!["two\nlines"]);
        assert_eq!((recs[1].line, recs[2].line), (2, 4));
    }

    #[test]
    fn empty_quoted_field_is_kept() {
        assert_eq!(fields("\"\"\n"), vec![vec![""]]);
        assert_eq!(fields("a,\"\"\n"), vec![vec!["a", ""]]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("a,b\n1,\"open\n").err();
        assert!(
            matches!(e, Some(CalcError::BadData { row: 2, .. })),
            "{e:?}"
        );
        let e = parse("a\nb\"c\n").err();
        assert!(
            matches!(e, Some(CalcError::BadData { row: 2, .. })),
            "{e:?}"
        );
        let e = parse("\"a\"b\n").err();
        assert!(
            matches!(e, Some(CalcError::BadData { row: 1, .. })),
            "{e:?}"
        );
    }
}
