//! Name normalisation for master data: one spelling per name, so `Fragaria × ananassa`,
//! `fragaria  x Ananassa` and `Fragaria x ananassa` are the same record.

/// Lower case, whitespace folded to single spaces and trimmed, the hybrid sign `×` written `x`.
pub fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for word in name.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in word.chars() {
            match c {
                '×' => out.push('x'),
                c => out.extend(c.to_lowercase()),
            }
        }
    }
    out
}

/// The genus of a scientific name: its first token, as written.
pub fn genus(scientific_name: &str) -> Option<&str> {
    scientific_name.split_whitespace().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises() {
        for (raw, want) in [
            ("Solanum lycopersicum", "solanum lycopersicum"),
            ("  Solanum   Lycopersicum ", "solanum lycopersicum"),
            ("Fragaria × ananassa", "fragaria x ananassa"),
            ("Fragaria x ananassa", "fragaria x ananassa"),
            ("Fragaria ×ananassa", "fragaria xananassa"),
            ("×Chitalpa tashkentensis", "xchitalpa tashkentensis"),
            ("Monstera\tdeliciosa\n", "monstera deliciosa"),
            ("ÄPFEL Öl", "äpfel öl"),
            ("", ""),
            ("   ", ""),
        ] {
            assert_eq!(normalise(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn hybrid_sign_and_letter_x_collide() {
        assert_eq!(
            normalise("Fragaria × ananassa"),
            normalise("FRAGARIA X ANANASSA")
        );
    }

    #[test]
    fn genus_is_first_token() {
        assert_eq!(genus("Lithops lesliei"), Some("Lithops"));
        assert_eq!(genus("  Howea forsteriana"), Some("Howea"));
        assert_eq!(genus(""), None);
    }
}
