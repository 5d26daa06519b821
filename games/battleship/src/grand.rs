//! The grand protocol: Grand et al.'s 18 boards (embedded), their parser and the game seeds.

use std::fmt;

use crate::board::{Board, BoardError, Color, NUM_SHIPS, Placement, Ship};
use crate::cell::{Cell, cells_of};

/// The three replicate game seeds of Grand et al.'s runner.
pub const GRAND_SEEDS: [i64; 3] = [42, 111, 1337];

/// Board ids, B01..B18.
pub const GRAND_BOARD_IDS: [&str; 18] = crate::paper::PAPER_BOARD_IDS;

/// The board files, embedded at compile time, in id order.
const GRAND_BOARD_FILES: [&str; 18] = [
    include_str!("../data/grand-boards/board_B01.txt"),
    include_str!("../data/grand-boards/board_B02.txt"),
    include_str!("../data/grand-boards/board_B03.txt"),
    include_str!("../data/grand-boards/board_B04.txt"),
    include_str!("../data/grand-boards/board_B05.txt"),
    include_str!("../data/grand-boards/board_B06.txt"),
    include_str!("../data/grand-boards/board_B07.txt"),
    include_str!("../data/grand-boards/board_B08.txt"),
    include_str!("../data/grand-boards/board_B09.txt"),
    include_str!("../data/grand-boards/board_B10.txt"),
    include_str!("../data/grand-boards/board_B11.txt"),
    include_str!("../data/grand-boards/board_B12.txt"),
    include_str!("../data/grand-boards/board_B13.txt"),
    include_str!("../data/grand-boards/board_B14.txt"),
    include_str!("../data/grand-boards/board_B15.txt"),
    include_str!("../data/grand-boards/board_B16.txt"),
    include_str!("../data/grand-boards/board_B17.txt"),
    include_str!("../data/grand-boards/board_B18.txt"),
];

/// Why a board file was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseBoardError {
    /// The file does not have exactly 8 non-empty lines.
    RowCount(usize),
    /// A line does not have exactly 8 comma-separated fields.
    FieldCount {
        /// Zero-based line.
        row: usize,
        /// Number of fields found.
        fields: usize,
    },
    /// A field is not one of `W R G P O`.
    BadSymbol {
        /// Zero-based line.
        row: usize,
        /// Zero-based field.
        col: usize,
        /// The offending text.
        symbol: String,
    },
    /// A colour does not appear on the board.
    MissingShip(Color),
    /// A colour's cells do not form one straight horizontal or vertical segment.
    NotStraight(Color),
    /// The ships do not form a valid board (for example a length outside 2..=5).
    Board(BoardError),
}

impl fmt::Display for ParseBoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RowCount(n) => write!(f, "expected 8 rows, found {n}"),
            Self::FieldCount { row, fields } => {
                write!(f, "row {} has {fields} fields, expected 8", row + 1)
            }
            Self::BadSymbol { row, col, symbol } => {
                write!(
                    f,
                    "row {} field {}: `{symbol}` is not one of W R G P O",
                    row + 1,
                    col + 1
                )
            }
            Self::MissingShip(c) => write!(f, "the board has no {c} ship"),
            Self::NotStraight(c) => write!(f, "the {c} ship is not a straight segment"),
            Self::Board(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ParseBoardError {}

/// Parses one board file: 8 lines of 8 comma-separated symbols, `W` water and `R G P O` ships.
/// Surrounding whitespace and a trailing newline are accepted; anything else is a typed error.
pub fn parse_grand_board(text: &str) -> Result<Board, ParseBoardError> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() != 8 {
        return Err(ParseBoardError::RowCount(lines.len()));
    }
    let mut masks = [0u64; NUM_SHIPS];
    for (row, line) in lines.iter().enumerate() {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 8 {
            return Err(ParseBoardError::FieldCount {
                row,
                fields: fields.len(),
            });
        }
        for (col, field) in fields.iter().enumerate() {
            let color = match *field {
                "W" => continue,
                "R" => Color::Red,
                "G" => Color::Green,
                "P" => Color::Purple,
                "O" => Color::Orange,
                other => {
                    return Err(ParseBoardError::BadSymbol {
                        row,
                        col,
                        symbol: other.to_string(),
                    });
                }
            };
            masks[color.index()] |= 1u64 << (row * 8 + col);
        }
    }
    let mut ships = Vec::with_capacity(NUM_SHIPS);
    for color in Color::ALL {
        let mask = masks[color.index()];
        if mask == 0 {
            return Err(ParseBoardError::MissingShip(color));
        }
        let placement = Placement::from_mask(mask).ok_or(ParseBoardError::NotStraight(color))?;
        ships.push(Ship { color, placement });
    }
    let ships: [Ship; NUM_SHIPS] = [ships[0], ships[1], ships[2], ships[3]];
    Board::new(ships).map_err(ParseBoardError::Board)
}

/// Grand board with index 0..18 (`B01` = 0), parsed from the embedded file; `None` out of range.
pub fn grand_board(index: usize) -> Option<Result<Board, ParseBoardError>> {
    GRAND_BOARD_FILES
        .get(index)
        .map(|text| parse_grand_board(text))
}

/// One entry of Grand's ship tracker: a ship length, and the colour once that ship is sunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackerEntry {
    /// Ship length.
    pub len: usize,
    /// The colour, revealed only when the ship is sunk.
    pub sunk: Option<Color>,
}

/// The ship tracker shown to the captain: the multiset of lengths with sunk status. Entries are
/// sorted by decreasing length, then sunk before afloat, then colour, so the order never leaks
/// the identity of a ship that is still afloat.
pub fn tracker(board: &Board, hits: u64) -> Vec<TrackerEntry> {
    let mut entries: Vec<TrackerEntry> = board
        .ships()
        .iter()
        .map(|s| TrackerEntry {
            len: s.len(),
            sunk: (s.mask() & hits == s.mask()).then_some(s.color),
        })
        .collect();
    entries.sort_by_key(|e| (std::cmp::Reverse(e.len), e.sunk.is_none(), e.sunk));
    entries
}

/// The colour of each hit cell, in cell order: what a grand captain sees on hit tiles.
pub fn revealed_colors(board: &Board, hits: u64) -> Vec<(Cell, Color)> {
    cells_of(hits & board.union())
        .filter_map(|c| board.ship_at(c).map(|col| (c, col)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §1a of the Grand reference: colour, length, orientation, first and last tile.
    const TABLE: [&str; 18] = [
        "R3V F2-H2 ; G3V B5-D5 ; P3V E3-G3 ; O3V C4-E4",
        "R2V F5-G5 ; G2V B8-C8 ; P4H H2-H5 ; O4H A2-A5",
        "R5H G1-G5 ; G4V B3-E3 ; P2V C2-D2 ; O2V C8-D8",
        "R2H G3-G4 ; G3V A4-C4 ; P4V B7-E7 ; O4H E2-E5",
        "R3V C2-E2 ; G4V E6-H6 ; P3H A3-A5 ; O5H D4-D8",
        "R2H D2-D3 ; G2H E6-E7 ; P3H A5-A7 ; O3H D5-D7",
        "R3H E1-E3 ; G3H B5-B7 ; P3V E4-G4 ; O2H F2-F3",
        "R2H E2-E3 ; G3H B2-B4 ; P2H D3-D4 ; O3H E5-E7",
        "R2H H5-H6 ; G5V B6-F6 ; P4V C4-F4 ; O4H A5-A8",
        "R3V B7-D7 ; G2H A4-A5 ; P2V E1-F1 ; O2V G8-H8",
        "R4H E1-E4 ; G5H G2-G6 ; P2V B6-C6 ; O4V A5-D5",
        "R2H F6-F7 ; G3H G2-G4 ; P2H C1-C2 ; O2V A3-B3",
        "R5H C1-C5 ; G2H A5-A6 ; P5H D4-D8 ; O3H G1-G3",
        "R3H B2-B4 ; G4H E5-E8 ; P5H H2-H6 ; O3H A2-A4",
        "R3V B4-D4 ; G2V E4-F4 ; P3H A4-A6 ; O3V E3-G3",
        "R4V A1-D1 ; G5V B5-F5 ; P4H H5-H8 ; O5H A2-A6",
        "R3V B4-D4 ; G2V B8-C8 ; P4V D7-G7 ; O4H A1-A4",
        "R4H B1-B4 ; G2V E3-F3 ; P2H E6-E7 ; O3V B5-D5",
    ];

    #[test]
    fn embedded_boards_match_the_reference_table() {
        let cells = [
            12, 12, 13, 13, 15, 10, 11, 10, 15, 9, 15, 9, 15, 15, 11, 18, 13, 11,
        ];
        for (i, row) in TABLE.iter().enumerate() {
            let board = grand_board(i).expect("index").expect("parses");
            let got: Vec<String> = board
                .ships()
                .iter()
                .map(|s| {
                    let p = s.placement;
                    let o = if p.horizontal { 'H' } else { 'V' };
                    format!("{}{}{} {}-{}", s.color.letter(), p.len, o, p.start, p.end())
                })
                .collect();
            assert_eq!(got.join(" ; "), *row, "{}", GRAND_BOARD_IDS[i]);
            assert_eq!(board.ship_cells(), cells[i]);
        }
        assert!(grand_board(18).is_none());
    }

    #[test]
    fn parse_errors_are_typed() {
        let good = GRAND_BOARD_FILES[0];
        assert_eq!(parse_grand_board(""), Err(ParseBoardError::RowCount(0)));
        let short = good.replacen("W,W,W,W,W,W,W,W", "W,W,W", 1);
        assert_eq!(
            parse_grand_board(&short),
            Err(ParseBoardError::FieldCount { row: 0, fields: 3 })
        );
        let bad = good.replacen('W', "X", 1);
        assert!(matches!(
            parse_grand_board(&bad),
            Err(ParseBoardError::BadSymbol { row: 0, col: 0, .. })
        ));
        let no_red = good.replace('R', "W");
        assert_eq!(
            parse_grand_board(&no_red),
            Err(ParseBoardError::MissingShip(Color::Red))
        );
        let bent = good.replacen('W', "R", 1);
        assert_eq!(
            parse_grand_board(&bent),
            Err(ParseBoardError::NotStraight(Color::Red))
        );
    }

    #[test]
    fn tracker_reveals_colour_only_when_sunk() {
        let board = grand_board(0).expect("index").expect("parses");
        let red = board.ships()[0].mask();
        let t = tracker(&board, red);
        assert_eq!(t.len(), 4);
        assert!(t.iter().all(|e| e.len == 3));
        assert_eq!(t[0].sunk, Some(Color::Red));
        assert!(t[1..].iter().all(|e| e.sunk.is_none()));
        assert_eq!(revealed_colors(&board, red).len(), 3);
    }
}
