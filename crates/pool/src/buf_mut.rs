//! `bytes::BufMut` for [`Buf`] (the `bytes` feature), so that code written against any
//! `BufMut` (`put_u32`, `put_slice`, encoders generic over their output) writes into it.

use bytes::buf::UninitSlice;

use crate::buf::Buf;

#[cfg_attr(docsrs, doc(cfg(feature = "bytes")))]
// SAFETY: `chunk_mut` is the buffer's unwritten part, `remaining_mut` bytes long, which only
// this `Buf` may touch; `advance_mut` counts bytes as written only within it.
unsafe impl bytes::BufMut for Buf {
    #[inline]
    fn remaining_mut(&self) -> usize {
        self.remaining()
    }

    #[inline]
    unsafe fn advance_mut(&mut self, cnt: usize) {
        assert!(
            cnt <= self.remaining(),
            "Buf::advance_mut: {cnt} bytes past the {} left",
            self.remaining()
        );
        // SAFETY: within the room (checked above), whose first `cnt` bytes the caller of
        // `advance_mut` initialized.
        unsafe { self.set_len(self.len() + cnt) };
    }

    #[inline]
    fn chunk_mut(&mut self) -> &mut UninitSlice {
        UninitSlice::uninit(self.spare_capacity_mut())
    }
}
