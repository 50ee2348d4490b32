//! The methods and stream impls that the unordered sets (`FuturesUnorderedBounded` and
//! `FuturesUnordered`) share word for word, written once.

/// Generates, for a set type `$set<F>` with fields `arena` (an [`Arena`](crate::Arena) or a
/// [`GrowableArena`](crate::GrowableArena) of `F`) and `terminated: bool`: the keyed methods
/// (`remove`, `contains_key`, `get`, `get_pin_mut`), `len`, `is_empty`, the iterators (`iter`,
/// `iter_pin_mut`, `iter_mut`), `poll_next_keyed`, and `Stream` and `FusedStream`. The calling
/// crate depends on `futures-core`.
#[doc(hidden)]
#[macro_export]
macro_rules! unordered_set_common {
    ($set:ident) => {
        impl<F> $set<F> {
            /// Drops `key`'s future in place now; its output never comes. `false` if it was
            /// gone already (finished, removed, or cleared).
            pub fn remove(&mut self, key: $crate::Key) -> bool {
                self.arena.remove(key)
            }

            /// Whether `key`'s future is still in the set.
            pub fn contains_key(&self, key: $crate::Key) -> bool {
                self.arena.contains_key(key)
            }

            /// `key`'s future, if it is still in the set.
            pub fn get(&self, key: $crate::Key) -> ::core::option::Option<&F> {
                self.arena.get(key)
            }

            /// `key`'s future, pinned, if it is still in the set.
            pub fn get_pin_mut(
                &mut self,
                key: $crate::Key,
            ) -> ::core::option::Option<::core::pin::Pin<&mut F>> {
                self.arena.get_pin_mut(key)
            }

            /// How many futures the set holds.
            pub fn len(&self) -> usize {
                self.arena.len()
            }

            /// Whether the set holds no future.
            pub fn is_empty(&self) -> bool {
                self.arena.is_empty()
            }

            /// The futures in the set, in no particular order.
            pub fn iter(&self) -> impl ::core::iter::ExactSizeIterator<Item = &F> + '_ {
                self.arena.iter().map(|(_, fut)| fut)
            }

            /// The futures in the set, pinned, in no particular order.
            pub fn iter_pin_mut(
                &mut self,
            ) -> impl ::core::iter::ExactSizeIterator<Item = ::core::pin::Pin<&mut F>> + '_ {
                self.arena.iter_pin_mut().map(|(_, fut)| fut)
            }

            /// The futures in the set, mutably, in no particular order. For `F: Unpin`; use
            /// [`iter_pin_mut`](Self::iter_pin_mut) otherwise.
            pub fn iter_mut(&mut self) -> impl ::core::iter::ExactSizeIterator<Item = &mut F> + '_
            where
                F: ::core::marker::Unpin,
            {
                self.arena
                    .iter_pin_mut()
                    .map(|(_, fut)| ::core::pin::Pin::into_inner(fut))
            }
        }

        impl<F: ::core::future::Future> $set<F> {
            /// `poll_next` that also says which future gave the output: the key
            /// [`insert`](Self::insert) returned for it.
            pub fn poll_next_keyed(
                &mut self,
                cx: &mut ::core::task::Context<'_>,
            ) -> ::core::task::Poll<::core::option::Option<($crate::Key, F::Output)>> {
                $crate::coop::poll_output(cx, |cx| {
                    let polled = self.arena.poll_next(cx, |_, fut, cx| {
                        $crate::Step::done(::core::future::Future::poll(fut, cx))
                    });
                    if let ::core::task::Poll::Ready(None) = polled {
                        self.terminated = true;
                    }
                    polled
                })
            }
        }

        impl<F: ::core::future::Future> ::futures_core::Stream for $set<F> {
            type Item = F::Output;

            fn poll_next(
                self: ::core::pin::Pin<&mut Self>,
                cx: &mut ::core::task::Context<'_>,
            ) -> ::core::task::Poll<::core::option::Option<F::Output>> {
                self.get_mut()
                    .poll_next_keyed(cx)
                    .map(|polled| polled.map(|(_, out)| out))
            }

            fn size_hint(&self) -> (usize, ::core::option::Option<usize>) {
                (self.len(), Some(self.len()))
            }
        }

        impl<F: ::core::future::Future> ::futures_core::FusedStream for $set<F> {
            fn is_terminated(&self) -> bool {
                self.terminated
            }
        }
    };
}
