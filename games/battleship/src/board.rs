//! Ships and boards as 64-bit masks, and the precomputed placement tables.

use std::fmt;

use crate::cell::{Cell, cells_of};

/// Number of ships on every board of both protocols.
pub const NUM_SHIPS: usize = 4;
/// Shortest ship length.
pub const MIN_SHIP_LEN: usize = 2;
/// Longest ship length.
pub const MAX_SHIP_LEN: usize = 5;
/// Most placements any ship length has (length 2: 56 horizontal + 56 vertical).
pub const MAX_PLACEMENTS: usize = 112;

/// Ship colours. The order is the paper fleet's placement order and Grand's id order
/// (red 1, green 2, purple 3, orange 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Color {
    /// Red (`R`, id 1).
    Red,
    /// Green (`G`, id 2).
    Green,
    /// Purple (`P`, id 3).
    Purple,
    /// Orange (`O`, id 4).
    Orange,
}

impl Color {
    /// The four colours in order.
    pub const ALL: [Color; NUM_SHIPS] = [Color::Red, Color::Green, Color::Purple, Color::Orange];

    /// Position in [`Color::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case name, e.g. `red`.
    pub const fn name(self) -> &'static str {
        match self {
            Color::Red => "red",
            Color::Green => "green",
            Color::Purple => "purple",
            Color::Orange => "orange",
        }
    }

    /// One-letter symbol used by Grand's board files and the grid picture.
    pub const fn letter(self) -> char {
        match self {
            Color::Red => 'R',
            Color::Green => 'G',
            Color::Purple => 'P',
            Color::Orange => 'O',
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One straight placement of a ship: its cells as a mask plus its start and orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    /// The covered cells.
    pub mask: u64,
    /// Top-left cell.
    pub start: Cell,
    /// Number of cells.
    pub len: u8,
    /// True for a horizontal (row) placement.
    pub horizontal: bool,
}

impl Placement {
    /// The placement of length `len` starting at `start`, if it fits on the grid.
    pub fn new(start: Cell, len: usize, horizontal: bool) -> Option<Self> {
        if !(1..=8).contains(&len) {
            return None;
        }
        let (row, col) = (start.row(), start.col());
        let fits = if horizontal {
            col + len <= 8
        } else {
            row + len <= 8
        };
        if !fits {
            return None;
        }
        Some(Self {
            mask: line_mask(row, col, len, horizontal),
            start,
            len: len as u8,
            horizontal,
        })
    }

    /// Last cell of the placement.
    pub fn end(&self) -> Cell {
        let k = self.len as usize - 1;
        let (r, c) = if self.horizontal {
            (self.start.row(), self.start.col() + k)
        } else {
            (self.start.row() + k, self.start.col())
        };
        Cell::from_index_unchecked((r * 8 + c) as u32)
    }

    /// Recovers a placement from its mask, if the mask is a straight line of 1..=8 cells.
    pub fn from_mask(mask: u64) -> Option<Self> {
        if mask == 0 {
            return None;
        }
        let start = Cell::from_index_unchecked(mask.trailing_zeros());
        let len = mask.count_ones() as usize;
        [true, false]
            .into_iter()
            .filter_map(|h| Placement::new(start, len, h))
            .find(|p| p.mask == mask)
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let orient = if self.horizontal { 'H' } else { 'V' };
        write!(f, "{}-{} {}", self.start, self.end(), orient)
    }
}

const fn line_mask(row: usize, col: usize, len: usize, horizontal: bool) -> u64 {
    let mut mask = 0u64;
    let mut k = 0;
    while k < len {
        let idx = if horizontal {
            row * 8 + col + k
        } else {
            (row + k) * 8 + col
        };
        mask |= 1u64 << idx;
        k += 1;
    }
    mask
}

/// The placement masks of one ship length in the sampler's enumeration order: horizontal
/// first, then vertical; within each, rows then columns in increasing order; start range
/// `9 - len` (every placement that fits).
#[derive(Clone, Copy, Debug)]
pub struct PlacementTable {
    masks: [u64; MAX_PLACEMENTS],
    len: usize,
}

impl PlacementTable {
    const fn build(ship_len: usize) -> Self {
        let mut masks = [0u64; MAX_PLACEMENTS];
        let mut n = 0;
        let span = 9 - ship_len;
        let mut orient = 0;
        while orient < 2 {
            let horizontal = orient == 0;
            let (rows, cols) = if horizontal { (8, span) } else { (span, 8) };
            let mut r = 0;
            while r < rows {
                let mut c = 0;
                while c < cols {
                    masks[n] = line_mask(r, c, ship_len, horizontal);
                    n += 1;
                    c += 1;
                }
                r += 1;
            }
            orient += 1;
        }
        Self { masks, len: n }
    }

    /// The masks, in enumeration order.
    pub fn masks(&self) -> &[u64] {
        &self.masks[..self.len]
    }
}

static PLACEMENT_TABLES: [PlacementTable; MAX_SHIP_LEN + 1] = [
    PlacementTable {
        masks: [0; MAX_PLACEMENTS],
        len: 0,
    },
    PlacementTable {
        masks: [0; MAX_PLACEMENTS],
        len: 0,
    },
    PlacementTable::build(2),
    PlacementTable::build(3),
    PlacementTable::build(4),
    PlacementTable::build(5),
];

/// Every placement mask of a ship of length `len` (2..=5) in enumeration order; empty for any
/// other length.
pub fn placement_masks(len: usize) -> &'static [u64] {
    PLACEMENT_TABLES.get(len).map_or(&[], PlacementTable::masks)
}

/// One ship on a board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ship {
    /// Its colour (identity).
    pub color: Color,
    /// Its placement.
    pub placement: Placement,
}

impl Ship {
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.placement.len as usize
    }

    /// Ships are never empty; provided for API completeness alongside [`Ship::len`].
    pub fn is_empty(&self) -> bool {
        self.placement.len == 0
    }

    /// The covered cells.
    pub fn mask(&self) -> u64 {
        self.placement.mask
    }
}

/// Why a set of ships is not a valid board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardError {
    /// Two ships share a cell.
    Overlap(Color, Color),
    /// A ship length is outside 2..=5.
    BadLength(Color, usize),
    /// Two ships have the same colour.
    DuplicateColor(Color),
}

impl fmt::Display for BoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overlap(a, b) => write!(f, "the {a} and {b} ships overlap"),
            Self::BadLength(c, n) => write!(f, "the {c} ship has length {n}, not 2..=5"),
            Self::DuplicateColor(c) => write!(f, "two ships are {c}"),
        }
    }
}

impl std::error::Error for BoardError {}

/// A full board: four non-overlapping straight ships (touching allowed), stored in colour
/// order so that `ships()[i].color == Color::ALL[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    ships: [Ship; NUM_SHIPS],
    union: u64,
}

impl Board {
    /// Builds a board from four ships in any order, checking lengths, colours and overlap.
    pub fn new(mut ships: [Ship; NUM_SHIPS]) -> Result<Self, BoardError> {
        ships.sort_by_key(|s| s.color);
        let mut union = 0u64;
        for (i, ship) in ships.iter().enumerate() {
            if i > 0 && ships[i - 1].color == ship.color {
                return Err(BoardError::DuplicateColor(ship.color));
            }
            if !(MIN_SHIP_LEN..=MAX_SHIP_LEN).contains(&ship.len()) {
                return Err(BoardError::BadLength(ship.color, ship.len()));
            }
            if union & ship.mask() != 0 {
                let other = ships[..i]
                    .iter()
                    .find(|s| s.mask() & ship.mask() != 0)
                    .map_or(ship.color, |s| s.color);
                return Err(BoardError::Overlap(other, ship.color));
            }
            union |= ship.mask();
        }
        Ok(Self { ships, union })
    }

    /// The ships in colour order.
    pub fn ships(&self) -> &[Ship; NUM_SHIPS] {
        &self.ships
    }

    /// The ship masks in colour order.
    pub fn ship_masks(&self) -> [u64; NUM_SHIPS] {
        self.ships.map(|s| s.mask())
    }

    /// The ship lengths in colour order.
    pub fn lengths(&self) -> [usize; NUM_SHIPS] {
        self.ships.map(|s| s.len())
    }

    /// All ship cells.
    pub fn union(&self) -> u64 {
        self.union
    }

    /// Number of ship cells.
    pub fn ship_cells(&self) -> u32 {
        self.union.count_ones()
    }

    /// The colour of the ship on `cell`, if any.
    pub fn ship_at(&self, cell: Cell) -> Option<Color> {
        self.ships
            .iter()
            .find(|s| s.mask() & cell.bit() != 0)
            .map(|s| s.color)
    }

    /// True when at least one cell of `region` holds a ship: the only question predicate.
    pub fn exists_ship(&self, region: u64) -> bool {
        self.union & region != 0
    }

    /// The ship cells, in index order.
    pub fn cells(&self) -> impl Iterator<Item = Cell> {
        cells_of(self.union)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_counts_and_order() {
        for len in MIN_SHIP_LEN..=MAX_SHIP_LEN {
            let masks = placement_masks(len);
            assert_eq!(masks.len(), 2 * 8 * (9 - len));
            // First horizontal at A1, first vertical at A1, last vertical ends at H8.
            assert_eq!(masks[0].trailing_zeros(), 0);
            assert_eq!(masks[8 * (9 - len)], line_mask(0, 0, len, false));
            assert_eq!(masks[masks.len() - 1].leading_zeros(), 0);
            for &m in masks {
                assert_eq!(m.count_ones() as usize, len);
                assert!(Placement::from_mask(m).is_some());
            }
        }
        assert!(placement_masks(1).is_empty());
        assert!(placement_masks(9).is_empty());
    }

    #[test]
    fn placement_display_and_bounds() {
        let p = Placement::new("F2".parse().unwrap(), 5, true).unwrap();
        assert_eq!(p.to_string(), "F2-F6 H");
        assert!(Placement::new("A5".parse().unwrap(), 5, true).is_none());
        assert!(Placement::new("D1".parse().unwrap(), 5, false).is_some());
        assert!(Placement::new("E1".parse().unwrap(), 5, false).is_none());
    }

    #[test]
    fn board_rejects_overlap() {
        let a = Ship {
            color: Color::Red,
            placement: Placement::new(Cell::at(0, 0).unwrap(), 3, true).unwrap(),
        };
        let b = Ship {
            color: Color::Green,
            placement: Placement::new(Cell::at(0, 2).unwrap(), 2, false).unwrap(),
        };
        let c = Ship {
            color: Color::Purple,
            placement: Placement::new(Cell::at(5, 0).unwrap(), 2, true).unwrap(),
        };
        let d = Ship {
            color: Color::Orange,
            placement: Placement::new(Cell::at(7, 0).unwrap(), 2, true).unwrap(),
        };
        assert_eq!(
            Board::new([a, b, c, d]),
            Err(BoardError::Overlap(Color::Red, Color::Green))
        );
        let b2 = Ship {
            color: Color::Red,
            ..b
        };
        assert_eq!(
            Board::new([a, b2, c, d]),
            Err(BoardError::DuplicateColor(Color::Red))
        );
    }
}
