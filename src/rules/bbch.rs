//! BBCH growth stages for the plant-protection record (Regulation (EU) 2023/564 asks for the
//! crop's growth stage at each application). A grower may give the two-digit code; otherwise
//! the plant's phase gives the **principal** growth stage (the first digit) where the phase
//! definition in the catalogue names one (`bbch_principal_stage`, from [`SOURCE`]). Phases
//! that span several principal stages (vegetative: leaf development, side shoots and stem
//! elongation; harvest: harvestable leaves or ripe fruit) give none rather than a guess.

/// Where the principal stages come from.
pub const SOURCE: &str = "BBCH monograph, principal growth stages 0-9 (Meier, U. (ed.) 2018, \
     Growth stages of mono- and dicotyledonous plants, Julius Kuehn-Institut, \
     doi:10.5073/20180906-074619)";

/// A BBCH code as written on labels and records: two digits, `00` to `99`.
pub fn is_code(raw: &str) -> bool {
    raw.len() == 2 && raw.bytes().all(|b| b.is_ascii_digit())
}

/// The principal stage of a two-digit code.
pub fn principal_of_code(code: &str) -> Option<u8> {
    is_code(code).then(|| code.as_bytes()[0] - b'0')
}

pub const CODE_PATTERN: &str = "^[0-9]{2}$";

/// Every code, for schemas that list them as an enum.
pub const CODES: &[&str] = &[
    "00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15",
    "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31",
    "32", "33", "34", "35", "36", "37", "38", "39", "40", "41", "42", "43", "44", "45", "46", "47",
    "48", "49", "50", "51", "52", "53", "54", "55", "56", "57", "58", "59", "60", "61", "62", "63",
    "64", "65", "66", "67", "68", "69", "70", "71", "72", "73", "74", "75", "76", "77", "78", "79",
    "80", "81", "82", "83", "84", "85", "86", "87", "88", "89", "90", "91", "92", "93", "94", "95",
    "96", "97", "98", "99",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_list_is_every_code() {
        assert_eq!(CODES.len(), 100);
        assert!(CODES.iter().all(|c| is_code(c)));
    }

    #[test]
    fn codes_are_two_digits() {
        assert_eq!(principal_of_code("65"), Some(6));
        assert_eq!(principal_of_code("00"), Some(0));
        for bad in ["6", "650", "6a", "", "-1"] {
            assert!(!is_code(bad), "{bad}");
        }
    }
}
