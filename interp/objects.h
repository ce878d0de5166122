#pragma once
// Dicts, classes and their instances, bound methods and exceptions: the
// values of language v2 that hold other values by name or by key.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/interpreter.h"
#include "interp/value.h"

namespace thn {

// Python's index normalisation for sequences (IndexError "WHAT index out
// of range"), and slice.indices(n): start, step, count.
int64_t seq_index(const Value& idx, int64_t n, const char* what);
struct SliceRange {
  int64_t start, step, count;
};
SliceRange slice_range(const SliceObj& s, int64_t n);
// A method's argument count check, with Python's messages.
void method_arity(const std::string& name, const CallArgs& a, size_t lo, size_t hi);

// Python's hash of a key (equal numbers hash alike: hash(1) == hash(1.0) ==
// hash(True)); str, numbers, None and tuples of them by value, other
// objects by identity. Lists and dicts are unhashable (TypeError).
int64_t hash_value(const Value& v);
// Key equality: by value for the hashable-by-value kinds, else identity.
bool key_equals(const Value& a, const Value& b);

// A dict: entries in insertion order, indexed by hash. A deleted entry
// leaves a hole until the holes outnumber the entries.
struct DictObj : Object, Container, std::enable_shared_from_this<DictObj> {
  struct Entry {
    Value key, value;
    bool live = true;
  };
  std::vector<Entry> entries;
  std::unordered_multimap<int64_t, size_t> index;
  size_t count = 0;

  DictObj() { enroll(); }
  ~DictObj() override { unenroll(); }
  Value* find(const Value& key);
  void set(const Value& key, Value v);
  bool erase(const Value& key);
  // The live entries, in order.
  template <class F> void each(F&& f) const {
    for (const Entry& e : entries)
      if (e.live) f(e.key, e.value);
  }
  std::vector<Value> keys() const;

  void visit(const std::function<void(Container*)>& f) const override;
  long uses() const override { return weak_from_this().use_count(); }
  std::shared_ptr<const void> keep() override { return weak_from_this().lock(); }
  void clear() override;
};
Value make_dict();
// A str-keyed dict's item, or null.
Value* dict_get(const Value& dict, const std::string& key);

struct ClassObj;
// A new class with an empty namespace (a builtin's when module is "builtins").
Value make_class(std::string name, std::string module);

// A class: its name, base and namespace (a dict of str). The built-in
// exception classes are classes too, with the ErrorKind they stand for.
struct ClassObj : Object {
  std::string name;
  std::string module;  // the defining module's name, for repr
  std::shared_ptr<ClassObj> base;
  Value dict;  // a DictObj
  std::optional<ErrorKind> kind;  // a built-in exception class
  // The attribute from this class or its nearest base that has it.
  const Value* lookup(const std::string& name) const;
  bool derives_from(const ClassObj& other) const;
  bool is_exception() const;  // derives from BaseException
};
// An instance: its class and its attributes (a dict of str, in the order
// they were first set).
struct InstanceObj : Object, Container, std::enable_shared_from_this<InstanceObj> {
  std::shared_ptr<ClassObj> cls;
  Value dict;
  explicit InstanceObj(std::shared_ptr<ClassObj> c);
  ~InstanceObj() override { unenroll(); }
  void visit(const std::function<void(Container*)>& f) const override;
  long uses() const override { return weak_from_this().use_count(); }
  std::shared_ptr<const void> keep() override { return weak_from_this().lock(); }
  void clear() override;
};
// obj.method: the function with its first argument bound.
struct MethodObj : Object {
  Value self, fn;
};
// @staticmethod f: f, unbound when read from a class or an instance.
struct StaticMethodObj : Object {
  Value fn;
};
// super(): attribute lookup from `cls`'s base, bound to `self`.
struct SuperObj : Object {
  std::shared_ptr<ClassObj> cls;
  Value self;
};

// iter(x): the items still to come of a list or tuple (seen live, as
// Python's list iterator sees them), or of a copy of another iterable's.
// iter(x): x's items, taken one at a time. enumerate() and zip() of an
// iterator are iterators too, drawing from theirs only as they are taken
// (a loop that breaks leaves the rest to come, as in Python).
struct IteratorObj;
Value make_iterator(Interpreter& in, const Value& x);  // iter(x)
struct IteratorObj : Object {
  Value items;
  size_t next = 0;
  // Next: an instance's __next__ (`items`: the instance), called until it
  // raises StopIteration. Map: `items` (a function) of one item of each
  // source.
  enum class Kind : uint8_t { Items, Enumerate, Zip, Map, Next } kind = Kind::Items;
  std::vector<Value> sources;  // Enumerate: one iterator; Zip, Map: one per argument
  int64_t count = 0;           // Enumerate: the next index
  // The next item, or nothing once it is used up.
  std::optional<Value> take();
};

// The classes of `no_grad()` and `enable_grad()`, the context managers of
// `with` (gradient mode: autograd reads it).
Value grad_mode_class(bool enabled);

// StopIteration, raised as next() raises it (or caught: whether e is it).
[[noreturn]] void raise_stop_iteration();
bool is_stop_iteration(Interpreter& in, const Error& e);

// The built-in exception classes by name (Exception, ValueError, ...), and
// the one standing for an ErrorKind.
const std::vector<std::pair<std::string, Value>>& exception_classes();
Value exception_class(ErrorKind k);
// An exception instance of `cls` with these args.
Value make_exception(const Value& cls, std::vector<Value> args);
// KeyError(key): the exception carries the key itself, as Python's does.
[[noreturn]] void raise_key_error(const Value& key);
// What `except` sees for a C++ error: the instance a `raise` carried, or
// one made for the error's kind and message.
Value exception_value(const Error& e);

// A jit trace's output holds lists and tuples only: a dict in it is a
// tuple marked "__dict__" holding (keys, values), an object one marked
// "__object__" holding (class, keys, values); the values are the entries
// as they are (the tracer links and encodes them in turn). decode_mappings
// turns them back after the run (an object comes back as a new object of
// its class); decode_entries_into writes one's entries into `d`.
Value encode_shallow(const Value& v);
Value decode_mappings(const Value& v);
void decode_entries_into(DictObj& d, const Value& encoded);

// What a guard on a mutable value read from outside a trace compares: a
// list's items; a dict's keys and values; an object's class, attributes,
// and its classes' attributes (a class attribute may change too); a bound
// method's object and function; an iterator's position and items. Empty
// for other values.
std::vector<Value> shallow_contents(const Value& v);
// The same all the way down: each list, tuple, dict, object or class among the
// contents is followed by its own item count and contents, in turn (each
// once: a cycle ends there). Equal results mean the same structure of the
// same objects holding the same constants.
std::vector<Value> guarded_contents(const Value& v);
std::vector<Value> class_contents(const ClassObj& cls);  // each class of the chain: its name, then its entries

// The i-th item of a list or tuple, the i-th value of a dict, or the i-th
// attribute of an object, in insertion order.
const Value& child_at(const Value& v, size_t i);

// An error raised by `raise`: the exception instance goes with it, so an
// `except ... as e` gets the same object back, and a traceback names its class.
class RaisedError : public TracedError {
 public:
  RaisedError(ErrorKind k, std::string msg, Loc loc, Value exc, std::string type)
      : TracedError(k, std::move(msg), loc), exception(std::move(exc)), type_name(std::move(type)) {}
  const char* kind_name() const override { return type_name.c_str(); }
  Value exception;
  std::string type_name;
};

}  // namespace thn
