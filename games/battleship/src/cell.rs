//! Grid cells: indices 0..64 in row-major order, displayed as ids such as `D5`.

use std::fmt;
use std::str::FromStr;

/// Side length of the square grid.
pub const BOARD_SIZE: u8 = 8;
/// Number of cells on the grid.
pub const TOTAL_CELLS: u8 = 64;

/// One cell of the 8×8 grid. Row `A`..`H` is 0..7, column `1`..`8` is 0..7, and the index is
/// `row * 8 + col`, so bit `index` of a 64-bit mask stands for this cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell(u8);

/// Why a cell index, coordinate pair or id was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellError {
    /// The index is not in 0..64.
    IndexOutOfRange(usize),
    /// The row or column is not in 0..8.
    CoordinateOutOfRange {
        /// The rejected row.
        row: usize,
        /// The rejected column.
        col: usize,
    },
    /// The text is not a row letter `A`..`H` followed by a column number `1`..`8`.
    BadId(String),
}

impl fmt::Display for CellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::IndexOutOfRange(i) => write!(f, "cell index {i} is outside 0..64"),
            Self::CoordinateOutOfRange { row, col } => {
                write!(f, "cell ({row}, {col}) is outside the 8x8 grid")
            }
            Self::BadId(s) => write!(f, "`{s}` is not a cell id (expected A1..H8)"),
        }
    }
}

impl std::error::Error for CellError {}

impl Cell {
    /// The cell with this row-major index.
    pub fn new(index: usize) -> Result<Self, CellError> {
        if index < TOTAL_CELLS as usize {
            Ok(Self(index as u8))
        } else {
            Err(CellError::IndexOutOfRange(index))
        }
    }

    /// The cell at `row` (0 = `A`) and `col` (0 = column `1`).
    pub fn at(row: usize, col: usize) -> Result<Self, CellError> {
        if row < BOARD_SIZE as usize && col < BOARD_SIZE as usize {
            Ok(Self((row * 8 + col) as u8))
        } else {
            Err(CellError::CoordinateOutOfRange { row, col })
        }
    }

    /// Internal constructor for indices already known to be in range.
    pub(crate) const fn from_index_unchecked(index: u32) -> Self {
        Self(index as u8)
    }

    /// Row-major index in 0..64.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Row, 0 (`A`) to 7 (`H`).
    pub const fn row(self) -> usize {
        (self.0 / 8) as usize
    }

    /// Column, 0 (column `1`) to 7 (column `8`).
    pub const fn col(self) -> usize {
        (self.0 % 8) as usize
    }

    /// The single-bit mask of this cell.
    pub const fn bit(self) -> u64 {
        1u64 << self.0
    }

    /// All 64 cells in index order.
    pub fn all() -> impl Iterator<Item = Cell> {
        (0..TOTAL_CELLS).map(Cell)
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'A' + self.row() as u8) as char, self.col() + 1)
    }
}

impl FromStr for Cell {
    type Err = CellError;

    /// Parses ids such as `D5` (the row letter may be lower case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || CellError::BadId(s.to_string());
        let mut chars = s.chars();
        let letter = chars.next().ok_or_else(bad)?.to_ascii_uppercase();
        let digit = chars.next().ok_or_else(bad)?;
        if chars.next().is_some() || !('A'..='H').contains(&letter) || !('1'..='8').contains(&digit)
        {
            return Err(bad());
        }
        Cell::at(
            letter as usize - 'A' as usize,
            digit as usize - '1' as usize,
        )
    }
}

/// Iterates the cells whose bits are set in `mask`, in increasing index order.
pub fn cells_of(mask: u64) -> impl Iterator<Item = Cell> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let i = m.trailing_zeros();
            m &= m - 1;
            Some(Cell::from_index_unchecked(i))
        }
    })
}

/// The mask of the 4-neighbours (up, down, left, right) of the cells in `mask`, without
/// wrapping across row ends.
pub const fn neighbours4(mask: u64) -> u64 {
    const NOT_COL1: u64 = !0x0101_0101_0101_0101;
    const NOT_COL8: u64 = !0x8080_8080_8080_8080;
    (mask << 8) | (mask >> 8) | ((mask << 1) & NOT_COL1) | ((mask >> 1) & NOT_COL8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for cell in Cell::all() {
            let id = cell.to_string();
            assert_eq!(id.parse::<Cell>(), Ok(cell));
        }
        assert_eq!("D5".parse::<Cell>().map(Cell::index), Ok(3 * 8 + 4));
        assert_eq!("h8".parse::<Cell>().map(Cell::index), Ok(63));
    }

    #[test]
    fn bad_ids_are_errors() {
        for bad in ["", "A", "A0", "A9", "I1", "A10", "11", "é1"] {
            assert!(bad.parse::<Cell>().is_err(), "{bad}");
        }
        assert_eq!(Cell::new(64), Err(CellError::IndexOutOfRange(64)));
        assert!(Cell::at(8, 0).is_err());
    }

    #[test]
    fn neighbours_do_not_wrap() {
        let h1 = "A8".parse::<Cell>().unwrap().bit();
        let n: Vec<String> = cells_of(neighbours4(h1)).map(|c| c.to_string()).collect();
        assert_eq!(n, ["A7", "B8"]);
        let b1 = "B1".parse::<Cell>().unwrap().bit();
        let n: Vec<String> = cells_of(neighbours4(b1)).map(|c| c.to_string()).collect();
        assert_eq!(n, ["A1", "B2", "C1"]);
    }
}
