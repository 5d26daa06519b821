//! The two tasks' fixed data and their reference outputs.
//!
//! `finance_ecl` holds 12 loans of which 4 are invalid (a negative PD, an LGD above 1, a missing
//! LGD, a zero balance); `legal_clause` holds 10 clauses classified by fixed-priority keywords,
//! where clauses 7 and 8 match two categories and the higher-priority one wins. The outputs are
//! computed here from the data, the way the tools compute them, so the truth is the reference
//! run's output.

/// One loan: id, balance, probability of default, loss given default (`None`: missing).
pub struct Loan {
    /// The loan's id.
    pub id: &'static str,
    /// The exposure.
    pub balance: f64,
    /// The probability of default.
    pub pd: f64,
    /// The loss given default, if recorded.
    pub lgd: Option<f64>,
}

/// The loan book.
pub const LOANS: [Loan; 12] = [
    Loan {
        id: "L01",
        balance: 120_000.0,
        pd: 0.02,
        lgd: Some(0.45),
    },
    Loan {
        id: "L02",
        balance: 85_000.0,
        pd: 0.035,
        lgd: Some(0.40),
    },
    Loan {
        id: "L03",
        balance: 60_000.0,
        pd: -0.01,
        lgd: Some(0.50),
    },
    Loan {
        id: "L04",
        balance: 240_000.0,
        pd: 0.015,
        lgd: Some(0.35),
    },
    Loan {
        id: "L05",
        balance: 33_500.0,
        pd: 0.08,
        lgd: Some(0.60),
    },
    Loan {
        id: "L06",
        balance: 150_000.0,
        pd: 0.03,
        lgd: Some(1.20),
    },
    Loan {
        id: "L07",
        balance: 72_250.0,
        pd: 0.05,
        lgd: Some(0.55),
    },
    Loan {
        id: "L08",
        balance: 410_000.0,
        pd: 0.01,
        lgd: Some(0.30),
    },
    Loan {
        id: "L09",
        balance: 95_000.0,
        pd: 0.04,
        lgd: None,
    },
    Loan {
        id: "L10",
        balance: 18_900.0,
        pd: 0.12,
        lgd: Some(0.65),
    },
    Loan {
        id: "L11",
        balance: 0.0,
        pd: 0.02,
        lgd: Some(0.40),
    },
    Loan {
        id: "L12",
        balance: 128_400.0,
        pd: 0.025,
        lgd: Some(0.45),
    },
];

/// Why a loan is excluded, or `None` when it is valid.
pub fn invalid_reason(loan: &Loan) -> Option<&'static str> {
    if loan.pd < 0.0 || loan.pd > 1.0 {
        Some("negative_pd")
    } else if loan.lgd.is_none() {
        Some("missing_lgd")
    } else if loan.lgd.is_some_and(|l| !(0.0..=1.0).contains(&l)) {
        Some("lgd_above_one")
    } else if loan.balance <= 0.0 {
        Some("zero_balance")
    } else {
        None
    }
}

/// `round(x, 2)`, half away from zero, as the reference's `round(bal·PD·LGD, 2)`.
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The clause categories in priority order: the first whose keywords a clause contains wins.
pub const CATEGORIES: [(&str, &[&str]); 7] = [
    ("Force Majeure", &["force majeure", "act of god"]),
    ("Confidentiality", &["confidential", "non-disclosure"]),
    ("Indemnification", &["indemnify", "hold harmless"]),
    ("Termination", &["terminate", "termination"]),
    ("Payment", &["payment", "invoice"]),
    ("Governing Law", &["governed by", "jurisdiction"]),
    ("Liability", &["liability", "liable"]),
];

/// The category of a clause that matches no keyword.
pub const OTHER: &str = "Other";

/// The contract's clauses, numbered from 1. Clauses 7 and 8 match two categories each.
pub const CLAUSES: [&str; 10] = [
    "The Supplier shall deliver the Goods to the Buyer's warehouse within thirty days of each purchase order.",
    "All invoices are due for payment within forty-five days of receipt by the Buyer.",
    "Each party shall keep confidential all information disclosed by the other party under this Agreement.",
    "Either party may terminate this Agreement on ninety days' written notice to the other party.",
    "This Agreement shall be governed by the laws of England and Wales.",
    "Neither party shall be liable for indirect or consequential loss arising under this Agreement.",
    "The Supplier shall indemnify the Buyer against third-party claims, and the Buyer may terminate for breach of this clause.",
    "Delay caused by force majeure shall not count as breach, and such events shall be kept confidential by both parties.",
    "The Buyer shall inspect the Goods on delivery and notify defects within seven days.",
    "Notices under this Agreement shall be sent by registered post to the addresses stated above.",
];

/// The category of a clause by the fixed keyword priority.
pub fn classify(clause: &str) -> &'static str {
    let text = clause.to_lowercase();
    CATEGORIES
        .iter()
        .find(|(_, keywords)| keywords.iter().any(|k| text.contains(k)))
        .map_or(OTHER, |(name, _)| name)
}

/// The first 80 characters of a clause.
pub fn snippet(clause: &str) -> String {
    clause.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_loans_are_invalid_one_per_reason() {
        let reasons: Vec<_> = LOANS.iter().filter_map(invalid_reason).collect();
        assert_eq!(
            reasons,
            [
                "negative_pd",
                "lgd_above_one",
                "missing_lgd",
                "zero_balance"
            ]
        );
    }

    #[test]
    fn clauses_seven_and_eight_match_two_categories_and_the_higher_wins() {
        let matches = |clause: &str| {
            let text = clause.to_lowercase();
            CATEGORIES
                .iter()
                .filter(|(_, keys)| keys.iter().any(|k| text.contains(k)))
                .count()
        };
        let doubles: Vec<usize> = (0..10).filter(|&i| matches(CLAUSES[i]) == 2).collect();
        assert_eq!(doubles, [6, 7]);
        assert_eq!(classify(CLAUSES[6]), "Indemnification");
        assert_eq!(classify(CLAUSES[7]), "Force Majeure");
        assert!((0..10).all(|i| matches(CLAUSES[i]) <= 2));
        assert_eq!(classify(CLAUSES[0]), OTHER);
    }
}
