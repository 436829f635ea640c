//! A small RFC 4180 reader: comma-separated fields, `"` quoting with `""` for a quote, line
//! breaks inside quotes, CRLF or LF line ends. Blank lines are skipped.

/// The rows of a CSV text, or the 1-based line of the first malformed quote.
pub fn parse(text: &str) -> Result<Vec<Vec<String>>, usize> {
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    // Inside quotes; just after a closing quote (only a separator or line end may follow).
    let (mut quoted, mut closed) = (false, false);
    let (mut line, mut quote_line) = (1, 1);
    let mut chars = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .chars()
        .peekable();
    let end_row = |row: &mut Vec<String>, field: &mut String, rows: &mut Vec<Vec<String>>| {
        row.push(std::mem::take(field));
        if row.len() == 1 && row[0].is_empty() {
            row.clear();
        } else {
            rows.push(std::mem::take(row));
        }
    };
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => (quoted, closed) = (false, true),
                c => {
                    if c == '\n' {
                        line += 1;
                    }
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            ',' => {
                row.push(std::mem::take(&mut field));
                closed = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                end_row(&mut row, &mut field, &mut rows);
                line += 1;
                closed = false;
            }
            '"' if field.is_empty() && !closed => (quoted, quote_line) = (true, line),
            _ if closed => return Err(line),
            '"' => return Err(line),
            c => field.push(c),
        }
    }
    if quoted {
        return Err(quote_line);
    }
    end_row(&mut row, &mut field, &mut rows);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows() {
        let cases: &[(&str, Vec<Vec<&str>>)] = &[
            ("a,b\n1,2\n", vec![vec!["a", "b"], vec!["1", "2"]]),
            ("a,b\r\n1,2", vec![vec!["a", "b"], vec!["1", "2"]]),
            ("a\n\n\nb\n", vec![vec!["a"], vec!["b"]]),
            (
                "\"x, y\",\"say \"\"hi\"\"\"\n",
                vec![vec!["x, y", "say \"hi\""]],
            ),
            ("\"two\nlines\",z", vec![vec!["two\nlines", "z"]]),
            ("a,,c", vec![vec!["a", "", "c"]]),
            ("\u{feff}name\nBasil", vec![vec!["name"], vec!["Basil"]]),
        ];
        for (text, want) in cases {
            let got = parse(text).expect(text);
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|r| r.iter().map(|s| (*s).to_owned()).collect())
                .collect();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn refuses_stray_quotes() {
        assert_eq!(parse("a,b\nx\"y,z"), Err(2));
        assert_eq!(parse("a\n\"open"), Err(2));
        assert_eq!(parse("\"ab\"c"), Err(1));
    }
}
