// Python indexing (runtime/indexing.h) against PyTorch 1.13: each expectation
// was printed by /usr/bin/python3 from the torch expression in its comment.
#include <catch2/catch.hpp>

#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/indexing.h"
#include "runtime/views.h"

using namespace thn;

namespace {

// torch.arange(numel).reshape(shape) as `dtype`.
Tensor arange(const Dims& shape, DType dtype = DType::Float32) {
  Tensor t = empty(shape, DType::Float64);
  for (int64_t i = 0; i < t.numel(); i++) t.data<double>()[i] = double(i);
  return to_dtype(t, dtype);
}

template <class T>
Tensor from(std::initializer_list<T> values, const Dims& shape, DType dtype) {
  Tensor t = empty(shape, DType::Float64);
  int64_t i = 0;
  for (T v : values) t.data<double>()[i++] = double(v);
  return to_dtype(t, dtype);
}
Tensor longs(std::initializer_list<int64_t> v, Dims shape = {}) {
  if (shape.empty() && v.size() != 1) shape = {int64_t(v.size())};
  return from(v, shape, DType::Int64);
}
Tensor bools(std::initializer_list<int> v, Dims shape) { return from(v, shape, DType::Bool); }
Tensor floats(std::initializer_list<double> v, Dims shape) { return from(v, shape, DType::Float32); }

std::vector<double> values(const Tensor& t) {
  Tensor c = contiguous(to_dtype(t, DType::Float64));
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

void check(const Tensor& t, const Dims& sizes, const Dims& strides, const std::vector<double>& vals) {
  CHECK(t.sizes() == sizes);
  CHECK(t.strides() == strides);
  CHECK(values(t) == vals);
}

template <class F>
void check_error(F&& f, ErrorKind kind, const std::string& msg) {
  try {
    f();
    FAIL("no error; expected: " << msg);
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    CHECK(std::string(e.what()) == msg);
  }
}

const Slice all{};
Slice range(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step = {}) {
  return Slice{start, stop, step};
}

}  // namespace

TEST_CASE("basic indexing gives views", "[indexing]") {
  Tensor x = arange({2, 3, 4}), y = arange({2, 3});
  // y[1]
  check(index(y, {1}), {3}, {1}, {3, 4, 5});
  // y[-1, 1:]
  check(index(y, {-1, range(1, {})}), {2}, {1}, {4, 5});
  // y[:, ::2]
  check(index(y, {all, range({}, {}, 2)}), {2, 2}, {3, 2}, {0, 2, 3, 5});
  // y[-10:10]
  check(index(y, {range(-10, 10)}), {2, 3}, {3, 1}, {0, 1, 2, 3, 4, 5});
  // y[2:1]
  check(index(y, {range(2, 1)}), {0, 3}, {3, 1}, {});
  // y[:, 1::2]
  check(index(y, {all, range(1, {}, 2)}), {2, 1}, {3, 2}, {1, 4});
  // y[..., None, 1]
  check(index(y, {Ellipsis{}, NewAxis{}, 1}), {2, 1}, {3, 3}, {1, 4});
  // x[..., 1:3, 0]
  check(index(x, {Ellipsis{}, range(1, 3), 0}), {2, 2}, {12, 4}, {4, 8, 16, 20});
  // x[1, None, ::3, -1]
  check(index(x, {1, NewAxis{}, range({}, {}, 3), -1}), {1, 1}, {12, 12}, {15});
  // y[torch.tensor(1)]: an integer 0-dim tensor acts as an integer
  check(index(y, {longs({1})}), {3}, {1}, {3, 4, 5});
  check(index(y, {from({1}, {}, DType::Int32)}), {3}, {1}, {3, 4, 5});
  // y[...]
  check(index(y, {Ellipsis{}}), {2, 3}, {3, 1}, {0, 1, 2, 3, 4, 5});

  Tensor v = index(x, {1, range(1, {})});
  CHECK(v.storage() == x.storage());
  fill(v, Scalar(-1.0));
  CHECK(values(index(x, {1, 0})) == std::vector<double>{12, 13, 14, 15});
  CHECK(values(index(x, {1, 2})) == std::vector<double>{-1, -1, -1, -1});
}

TEST_CASE("advanced indexing gathers into a new tensor", "[indexing]") {
  Tensor x = arange({2, 3, 4}), y = arange({2, 3});
  // y[[1,0,1]]
  Tensor g = index(y, {longs({1, 0, 1})});
  check(g, {3, 3}, {3, 1}, {3, 4, 5, 0, 1, 2, 3, 4, 5});
  CHECK(g.storage() != y.storage());
  // y[torch.tensor([-1, 0])]
  check(index(y, {longs({-1, 0})}), {2, 3}, {3, 1}, {3, 4, 5, 0, 1, 2});
  // y[torch.tensor([[True,False,True],[False,True,True]])]
  check(index(y, {bools({1, 0, 1, 0, 1, 1}, {2, 3})}), {4}, {1}, {0, 2, 4, 5});
  // y.t()[torch.tensor([True,False,True])]
  check(index(transpose(y, 0, 1), {bools({1, 0, 1}, {3})}), {2, 2}, {2, 1}, {0, 3, 2, 5});
  // y[0, torch.tensor(True)]
  check(index(y, {0, bools({1}, {})}), {1, 3}, {3, 1}, {0, 1, 2});
  // y[None, True, ..., False]
  check(index(y, {NewAxis{}, true, Ellipsis{}, false}), {0, 1, 2, 3}, {6, 0, 3, 1}, {});
  // y[torch.tensor([], dtype=torch.long)]
  check(index(y, {from<int64_t>({}, {0}, DType::Int64)}), {0, 3}, {3, 1}, {});
  // torch.zeros(2, 0)[:, torch.zeros(0, dtype=torch.long)]
  check(index(empty({2, 0}, DType::Float32), {all, from<int64_t>({}, {0}, DType::Int64)}), {2, 0}, {1, 1}, {});
  // bool dtype data: torch.tensor([True, False, True])[[2, 1]]
  check(index(bools({1, 0, 1}, {3}), {longs({2, 1})}), {2}, {1}, {1, 0});
}

TEST_CASE("advanced indices separated by a slice go to the front", "[indexing]") {
  Tensor x = arange({2, 3, 4});
  // x[[0,1],:,[0,1]]
  check(index(x, {longs({0, 1}), all, longs({0, 1})}), {2, 3}, {3, 1}, {0, 4, 8, 13, 17, 21});
  // x[[0,1],...,[0,1]]
  check(index(x, {longs({0, 1}), Ellipsis{}, longs({0, 1})}), {2, 3}, {3, 1}, {0, 4, 8, 13, 17, 21});
  // x[0, :, [1,2]]: the integer does not separate (it is applied first)
  check(index(x, {0, all, longs({1, 2})}), {3, 2}, {2, 1}, {1, 2, 5, 6, 9, 10});
  // x[:, [0,1], [1,2]]: adjacent, so they stay in place
  check(index(x, {all, longs({0, 1}), longs({1, 2})}), {2, 2}, {2, 1}, {1, 6, 13, 18});
  // x[:, 0, [1,2]]
  check(index(x, {all, 0, longs({1, 2})}), {2, 2}, {2, 1}, {1, 2, 13, 14});
  // x[[[0],[1]], 1, [0,2]]: broadcast indices
  check(index(x, {longs({0, 1}, {2, 1}), 1, longs({0, 2})}), {2, 2}, {2, 1}, {4, 6, 16, 18});
  // x[None, [0], None, 1:, [1]]
  check(index(x, {NewAxis{}, longs({0}, {1}), NewAxis{}, range(1, {}), longs({1}, {1})}), {1, 1, 1, 2}, {2, 2, 2, 1}, {5, 9});
}

TEST_CASE("advanced indexing output strides follow TensorIterator", "[indexing]") {
  Tensor x = arange({2, 3, 4});
  // x.permute(2,0,1)[:, [0,1]]
  check(index(permute(x, {2, 0, 1}), {all, longs({0, 1})}), {4, 2, 3}, {1, 4, 8},
        {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  // x.transpose(0,2)[[1]]
  check(index(transpose(x, 0, 2), {longs({1}, {1})}), {1, 3, 2}, {6, 1, 3}, {1, 13, 5, 17, 9, 21});
  // x[:, torch.tensor([[0,1],[1,2]]).t()]
  check(index(x, {all, transpose(longs({0, 1, 1, 2}, {2, 2}), 0, 1)}), {2, 2, 2, 4}, {16, 4, 8, 1},
        {0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 16, 17, 18, 19, 20, 21, 22, 23});
  // x.transpose(1,2)[:, :, [[0,1],[1,2]]]
  check(index(transpose(x, 1, 2), {all, all, longs({0, 1, 1, 2}, {2, 2})}), {2, 4, 2, 2}, {16, 4, 2, 1},
        {0, 4, 4, 8, 1, 5, 5, 9, 2, 6, 6, 10, 3, 7, 7, 11, 12, 16, 16, 20, 13, 17, 17, 21, 14, 18, 18, 22, 15, 19, 19, 23});
}

TEST_CASE("indexing errors", "[indexing]") {
  Tensor y = arange({2, 3}), q = floats({5}, {});
  // y[5]
  check_error([&] { index(y, {5}); }, ErrorKind::IndexError, "index 5 is out of bounds for dimension 0 with size 2");
  // y[:, 5]
  check_error([&] { index(y, {all, 5}); }, ErrorKind::IndexError, "index 5 is out of bounds for dimension 1 with size 3");
  // y[0, 0, 0]
  check_error([&] { index(y, {0, 0, 0}); }, ErrorKind::IndexError, "too many indices for tensor of dimension 2");
  // y[[0,1],[0,1],[0]]
  check_error([&] { index(y, {longs({0, 1}), longs({0, 1}), longs({0}, {1})}); }, ErrorKind::IndexError,
              "too many indices for tensor of dimension 2");
  // q[0], q[1]: a single integer on a 0-dim tensor
  check_error([&] { index(q, {0}); }, ErrorKind::IndexError,
              "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
              "a 0-dim tensor to a number");
  check_error([&] { index(q, {1}); }, ErrorKind::IndexError, "index 1 is out of bounds for dimension 0 with size 0");
  // q[0,]
  check_error([&] { index(q, {0, Ellipsis{}}); }, ErrorKind::IndexError, "too many indices for tensor of dimension 0");
  // y[::-1], y[::0]
  check_error([&] { index(y, {range({}, {}, -1)}); }, ErrorKind::ValueError, "step must be greater than zero");
  check_error([&] { index(y, {range({}, {}, 0)}); }, ErrorKind::ValueError, "slice step cannot be zero");
  // y[torch.tensor([0, 1], dtype=torch.int32)], y[torch.tensor([0., 1])]
  check_error([&] { index(y, {from({0, 1}, {2}, DType::Int32)}); }, ErrorKind::IndexError,
              "tensors used as indices must be long, byte or bool tensors");
  check_error([&] { index(y, {floats({0, 1}, {2})}); }, ErrorKind::IndexError,
              "tensors used as indices must be long, byte or bool tensors");
  // y[:, [5]]: the dimension counts the tensor indices
  check_error([&] { index(y, {all, longs({5}, {1})}); }, ErrorKind::IndexError,
              "index 5 is out of bounds for dimension 0 with size 3");
  // y[[0],[5]]
  check_error([&] { index(y, {longs({0}, {1}), longs({5}, {1})}); }, ErrorKind::IndexError,
              "index 5 is out of bounds for dimension 1 with size 3");
  // y[[0,1],[0,1,2]]
  check_error([&] { index(y, {longs({0, 1}), longs({0, 1, 2})}); }, ErrorKind::IndexError,
              "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
  // y[torch.tensor([True,False,True])]
  check_error([&] { index(y, {bools({1, 0, 1}, {3})}); }, ErrorKind::IndexError,
              "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3] at index 0");
  // y[:, torch.tensor([True,False])]
  check_error([&] { index(y, {all, bools({1, 0}, {2})}); }, ErrorKind::IndexError,
              "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [2, 3] at index 1");
  // torch.arange(24.).reshape(2,3,4)[torch.ones(2,3,dtype=torch.bool), 0]
  check_error([&] { index(arange({2, 3, 4}), {bools({1, 1, 1, 1, 1, 1}, {2, 3}), 0}); }, ErrorKind::IndexError,
              "The shape of the mask [2, 3] at index 1 does not match the shape of the indexed tensor [2, 4] at index 1");
}

TEST_CASE("setitem with basic indexing copies into the view", "[indexing]") {
  auto y = [] { return arange({2, 3}); };
  Tensor t = y();
  // y[0] = 7 (a Python number arrives as a wrapped 0-dim tensor)
  index_put(t, {0}, wrap_scalar(Scalar(int64_t(7))));
  CHECK(values(t) == std::vector<double>{7, 7, 7, 3, 4, 5});
  // y[:,1] = torch.tensor([7.,8.])
  t = y();
  index_put(t, {all, 1}, floats({7, 8}, {2}));
  CHECK(values(t) == std::vector<double>{0, 7, 2, 3, 8, 5});
  // y[0] = torch.tensor([[[1.,2,3]]]): leading 1s are dropped
  t = y();
  index_put(t, {0}, floats({1, 2, 3}, {1, 1, 3}));
  CHECK(values(t) == std::vector<double>{1, 2, 3, 3, 4, 5});
  // y[0] = torch.tensor(2.5, dtype=torch.float64): copy_ casts
  t = y();
  index_put(t, {0}, from({2.5}, {}, DType::Float64));
  CHECK(values(t) == std::vector<double>{2.5, 2.5, 2.5, 3, 4, 5});
  // y[...] = torch.tensor([1.,2,3])
  t = y();
  index_put(t, {Ellipsis{}}, floats({1, 2, 3}, {3}));
  CHECK(values(t) == std::vector<double>{1, 2, 3, 1, 2, 3});
  // y[1:, ::2] = torch.tensor([[[[1.,2]]]])
  t = y();
  index_put(t, {range(1, {}), range({}, {}, 2)}, floats({1, 2}, {1, 1, 1, 2}));
  CHECK(values(t) == std::vector<double>{0, 1, 2, 1, 4, 2});
  // y[True] = torch.tensor(3): a lone bool is basic, so int64 into float is fine
  t = y();
  index_put(t, {true}, longs({3}));
  CHECK(values(t) == std::vector<double>{3, 3, 3, 3, 3, 3});
  // y[False] = torch.ones(5): nothing, not even a shape check
  t = y();
  index_put(t, {false}, floats({1, 1, 1, 1, 1}, {5}));
  CHECK(values(t) == std::vector<double>{0, 1, 2, 3, 4, 5});
  // y[None] = 3
  t = y();
  index_put(t, {NewAxis{}}, wrap_scalar(Scalar(int64_t(3))));
  CHECK(values(t) == std::vector<double>{3, 3, 3, 3, 3, 3});
  // yi = torch.arange(6).reshape(2,3).int(); yi[0] = 2.7
  t = arange({2, 3}, DType::Int32);
  index_put(t, {0}, wrap_scalar(Scalar(2.7)));
  CHECK(values(t) == std::vector<double>{2, 2, 2, 3, 4, 5});
}

TEST_CASE("setitem with advanced indexing scatters", "[indexing]") {
  auto y = [] { return arange({2, 3}); };
  Tensor t = y();
  // y[[1,0]] = torch.tensor([[1.,2,3],[4,5,6]])
  index_put(t, {longs({1, 0})}, floats({1, 2, 3, 4, 5, 6}, {2, 3}));
  CHECK(values(t) == std::vector<double>{4, 5, 6, 1, 2, 3});
  // y[[0,0],[1,1]] = torch.tensor([1.,2]): the last write wins
  t = y();
  index_put(t, {longs({0, 0}), longs({1, 1})}, floats({1, 2}, {2}));
  CHECK(values(t) == std::vector<double>{0, 2, 2, 3, 4, 5});
  // y[torch.tensor([[True,False,True],[False,True,True]])] = -1
  t = y();
  index_put(t, {bools({1, 0, 1, 0, 1, 1}, {2, 3})}, wrap_scalar(Scalar(int64_t(-1))));
  CHECK(values(t) == std::vector<double>{-1, 1, -1, 3, -1, -1});
  // y[y>2] = torch.tensor([[9]]): one element under a mask is masked_fill_ (no dtype check)
  t = y();
  index_put(t, {bools({0, 0, 0, 1, 1, 1}, {2, 3})}, longs({9}, {1, 1}));
  CHECK(values(t) == std::vector<double>{0, 1, 2, 9, 9, 9});
  // y[:, torch.tensor([True,False,True])] = torch.tensor(7)
  t = y();
  index_put(t, {all, bools({1, 0, 1}, {3})}, longs({7}));
  CHECK(values(t) == std::vector<double>{7, 1, 7, 7, 4, 7});
  // y[1:,[0,2]] = 9
  t = y();
  index_put(t, {range(1, {}), longs({0, 2})}, wrap_scalar(Scalar(int64_t(9))));
  CHECK(values(t) == std::vector<double>{0, 1, 2, 9, 4, 9});
  // y.t()[[0]] = 1
  t = y();
  index_put(transpose(t, 0, 1), {longs({0}, {1})}, wrap_scalar(Scalar(int64_t(1))));
  CHECK(values(t) == std::vector<double>{1, 1, 2, 1, 4, 5});
  // y[[0,1]] = torch.ones(1,2,3)
  t = y();
  index_put(t, {longs({0, 1})}, floats({1, 1, 1, 1, 1, 1}, {1, 2, 3}));
  CHECK(values(t) == std::vector<double>{1, 1, 1, 1, 1, 1});
  // x[[0,1],:,[0,1]] = torch.arange(6.).reshape(2,3)
  Tensor x = arange({2, 3, 4});
  index_put(x, {longs({0, 1}), all, longs({0, 1})}, arange({2, 3}));
  CHECK(values(x) == std::vector<double>{0, 1, 2, 3, 1, 5, 6, 7, 2, 9, 10, 11, 12, 3, 14, 15, 16, 4, 18, 19, 20, 5, 22, 23});
  // x[:, [0,1], [1,2]] = torch.arange(4.).reshape(2,2)
  x = arange({2, 3, 4});
  index_put(x, {all, longs({0, 1}), longs({1, 2})}, arange({2, 2}));
  CHECK(values(x) == std::vector<double>{0, 0, 2, 3, 4, 5, 1, 7, 8, 9, 10, 11, 12, 2, 14, 15, 16, 17, 3, 19, 20, 21, 22, 23});
  // yi[[0,1],[2,0]] = 2.7
  t = arange({2, 3}, DType::Int32);
  index_put(t, {longs({0, 1}), longs({2, 0})}, wrap_scalar(Scalar(2.7)));
  CHECK(values(t) == std::vector<double>{0, 1, 2, 2, 4, 5});
  // yb = torch.tensor([True, False, True]); yb[yb] = False
  t = bools({1, 0, 1}, {3});
  index_put(t, {t}, wrap_scalar(Scalar(false)));
  CHECK(values(t) == std::vector<double>{0, 0, 0});
}

TEST_CASE("setitem errors", "[indexing]") {
  Tensor y = arange({2, 3});
  // y[:,1] = torch.tensor([7.,8.,9.])
  check_error([&] { index_put(y, {all, 1}, floats({7, 8, 9}, {3})); }, ErrorKind::RuntimeError,
              "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  "
              "Target sizes: [2].  Tensor sizes: [3]");
  // y[0] = torch.ones(2,3)
  check_error([&] { index_put(y, {0}, arange({2, 3})); }, ErrorKind::RuntimeError,
              "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or equal "
              "to the number of dimensions in the tensor (2)");
  // y[[0,1]] = torch.tensor([7,8,9])
  check_error([&] { index_put(y, {longs({0, 1})}, longs({7, 8, 9})); }, ErrorKind::RuntimeError,
              "Index put requires the source and destination dtypes match, got Float for the destination and Long for "
              "the source.");
  // y[[0,1],[1,2]] = torch.tensor([1.,2,3])
  check_error([&] { index_put(y, {longs({0, 1}), longs({1, 2})}, floats({1, 2, 3}, {3})); }, ErrorKind::RuntimeError,
              "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]");
  // y[[0,1]] = torch.ones(2,2,3)
  check_error([&] { index_put(y, {longs({0, 1})}, arange({2, 2, 3})); }, ErrorKind::RuntimeError,
              "shape mismatch: value tensor of shape [2, 2, 3] cannot be broadcast to indexing result of shape [2, 3]");
  // y[5] = 1, y[[5]] = 1
  check_error([&] { index_put(y, {5}, wrap_scalar(Scalar(int64_t(1)))); }, ErrorKind::IndexError,
              "index 5 is out of bounds for dimension 0 with size 2");
  check_error([&] { index_put(y, {longs({5}, {1})}, wrap_scalar(Scalar(int64_t(1)))); }, ErrorKind::IndexError,
              "index 5 is out of bounds for dimension 0 with size 2");
  CHECK(values(y) == std::vector<double>{0, 1, 2, 3, 4, 5});
}
