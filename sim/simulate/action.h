// action.h: Action, what a simulation event runs: a move-only void() callable kept inline when
// it is small.
//
// std::function keeps a callable inline only when it is trivially copyable and at most 16 bytes;
// the steps of a command in flight capture a shared_ptr (not trivially copyable), so each one
// cost an allocation there: about 150 a schedule. An Action keeps any callable of up to
// kInlineBytes that moves without throwing inline, and a larger one on the heap.
//
//   Action step = [flight] { arrive(flight); };  // inline: no allocation
//   step();
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace locksim {

class Action {
 public:
  static constexpr std::size_t kInlineBytes = 48;

  Action() = default;
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Action> &&
                                              std::is_invocable_r_v<void, std::decay_t<F>&>>>
  Action(F&& f) {  // NOLINT(google-explicit-constructor): a lambda converts, as to std::function
    using Stored = std::decay_t<F>;
    if constexpr (kFitsInline<Stored>) {
      ::new (static_cast<void*>(storage_)) Stored(std::forward<F>(f));
      ops_ = &kInlineOps<Stored>;
    } else {
      *reinterpret_cast<Stored**>(storage_) = new Stored(std::forward<F>(f));
      ops_ = &kHeapOps<Stored>;
    }
  }
  Action(Action&& other) noexcept { take(other); }
  Action& operator=(Action&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  Action(const Action&) = delete;
  Action& operator=(const Action&) = delete;
  ~Action() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(storage_); }
  void reset() {
    if (ops_ != nullptr) std::exchange(ops_, nullptr)->destroy(storage_);
  }

 private:
  struct Ops {
    void (*invoke)(void* storage);
    void (*destroy)(void* storage);
    void (*move)(void* to, void* from);  // leaves `from` destroyed
  };
  template <class F>
  static constexpr bool kFitsInline =
      sizeof(F) <= kInlineBytes &&
      alignof(F) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<F>;
  template <class F>
  static F& inline_target(void* storage) {
    return *std::launder(static_cast<F*>(storage));
  }
  template <class F>
  static constexpr Ops kInlineOps = {[](void* s) { inline_target<F>(s)(); },
                                     [](void* s) { inline_target<F>(s).~F(); },
                                     [](void* to, void* from) {
                                       ::new (to) F(std::move(inline_target<F>(from)));
                                       inline_target<F>(from).~F();
                                     }};
  template <class F>
  static constexpr Ops kHeapOps = {
      [](void* s) { (**static_cast<F**>(s))(); }, [](void* s) { delete *static_cast<F**>(s); },
      [](void* to, void* from) { *static_cast<F**>(to) = *static_cast<F**>(from); }};

  void take(Action& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->move(storage_, other.storage_);
    ops_ = std::exchange(other.ops_, nullptr);
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace locksim
