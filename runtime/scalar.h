#pragma once
// A Python number: bool, int (int64) or float (double).
#include <cstdint>
#include <string>

#include "runtime/dtype.h"

namespace thn {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool b) : kind_(Kind::Bool), i_(b) {}
  Scalar(int64_t i) : kind_(Kind::Int), i_(i) {}
  Scalar(int i) : kind_(Kind::Int), i_(i) {}
  Scalar(double d) : kind_(Kind::Float), d_(d) {}

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ != Kind::Float; }  // bool or int

  double to_double() const { return kind_ == Kind::Float ? d_ : double(i_); }
  int64_t to_int() const { return kind_ == Kind::Float ? int64_t(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0 : i_ != 0; }
  template <class T> T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return T(to_int());
    else return T(to_double());
  }
  // The dtype PyTorch gives a tensor made from this number (floats: the default dtype).
  DType dtype() const {
    return kind_ == Kind::Bool ? DType::Bool : kind_ == Kind::Int ? kDefaultInt : kDefaultFloat;
  }
  Category category() const {
    return kind_ == Kind::Bool ? Category::Bool : kind_ == Kind::Int ? Category::Integer : Category::Floating;
  }
  bool operator==(const Scalar& o) const {
    return kind_ == o.kind_ && (kind_ == Kind::Float ? d_ == o.d_ : i_ == o.i_);
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace thn
