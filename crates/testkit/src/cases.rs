//! One generic case, several types: [`tests_for_each!`](crate::tests_for_each) declares a
//! `#[test]` per case and per type under test, so a suite that holds for several types is
//! written once.

/// Declares, for each `module: Marker` pair, a module `module` holding one `#[test] fn case()`
/// per case, which calls `case::<Marker>()`. Each case is a function generic over the marker,
/// declared beside the invocation; attributes written before a case (such as
/// `#[cfg_attr(miri, ignore)]`) go on each of its tests. A marker is named as seen from inside
/// the module (`crate::support::Bounded`).
///
/// ```
/// trait Named {
///     const NAME: &'static str;
/// }
/// struct Short;
/// impl Named for Short {
///     const NAME: &'static str = "ab";
/// }
/// struct Long;
/// impl Named for Long {
///     const NAME: &'static str = "abcdef";
/// }
///
/// fn name_is_not_empty<N: Named>() {
///     assert!(!N::NAME.is_empty());
/// }
///
/// // `short::name_is_not_empty` and `long::name_is_not_empty`.
/// pinfold_testkit::tests_for_each!([short: super::Short, long: super::Long] {
///     name_is_not_empty,
/// });
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! tests_for_each {
    ([$($module:ident: $marker:ty),+ $(,)?] $cases:tt) => {
        $($crate::tests_for_each!(@module $module, $marker, $cases);)+
    };
    (@module $module:ident, $marker:ty, { $($(#[$attr:meta])* $case:ident),* $(,)? }) => {
        mod $module {
            $($(#[$attr])* #[test] fn $case() { super::$case::<$marker>(); })*
        }
    };
}
