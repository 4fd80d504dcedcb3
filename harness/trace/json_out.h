// One description of a JSON value, two forms of it: a nlohmann tree (JsonTree, what result.json
// stores) or its compact text (JsonText), the text exactly as the tree's
// dump(-1, ' ', false, error_handler_t::replace) would be, written without building the tree.
//
// The trace's fingerprint hashes that text (trace.h): a writer that calls the same JsonOut
// methods for both forms keeps the stored trace and its fingerprint one description, and the
// fingerprint of a virtual run costs no tree. The text form holds nlohmann's own rules: keys
// must come in increasing byte order (its std::map's), strings are escaped and invalid UTF-8
// replaced by U+FFFD as its dump does, doubles are written by its own Grisu2 (to_chars), not
// std::to_chars, whose shortest digits differ from it in places.
//
// Thread-safety: an instance is one writer's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hashing/fnv1a.h"
#include "nlohmann/json.hpp"

namespace faultline::harness {

// Every value is one call (Begin/End bracket an object or array); inside an object each value
// follows its Key. Keys come in increasing byte order, each once.
class JsonOut {
 public:
  virtual ~JsonOut() = default;
  virtual void BeginObject() = 0;
  virtual void EndObject() = 0;
  virtual void BeginArray() = 0;
  virtual void EndArray() = 0;
  virtual void Key(std::string_view key) = 0;
  virtual void String(std::string_view value) = 0;
  virtual void Int(std::int64_t value) = 0;
  virtual void Uint(std::uint64_t value) = 0;
  virtual void Double(double value) = 0;
  virtual void Bool(bool value) = 0;
  virtual void Null() = 0;
  // A value that is JSON already (a declared policy), with its compact text (as nlohmann's
  // dump(-1, ' ', false, error_handler_t::replace) writes it).
  virtual void Json(const nlohmann::json& value, std::string_view text) = 0;

  // Key(key) and its value: a bool, a number (signed: Int, unsigned: Uint) or a string.
  template <typename T>
  void Field(std::string_view key, const T& value) {
    Key(key);
    if constexpr (std::is_same_v<T, bool>) {
      Bool(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      Double(value);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      Int(value);
    } else if constexpr (std::is_integral_v<T>) {
      Uint(value);
    } else {
      String(value);
    }
  }
};

// The tree, as nlohmann::json built the usual way would be (numbers keep their kind: integer,
// unsigned, double).
class JsonTree final : public JsonOut {
 public:
  void BeginObject() override;
  void EndObject() override { open_.pop_back(); }
  void BeginArray() override;
  void EndArray() override { open_.pop_back(); }
  void Key(std::string_view key) override { key_.assign(key); }
  void String(std::string_view value) override { Slot() = std::string(value); }
  void Int(std::int64_t value) override { Slot() = value; }
  void Uint(std::uint64_t value) override { Slot() = value; }
  void Double(double value) override { Slot() = value; }
  void Bool(bool value) override { Slot() = value; }
  void Null() override { Slot() = nullptr; }
  void Json(const nlohmann::json& value, std::string_view) override { Slot() = value; }

  nlohmann::json Take() { return std::move(root_); }

 private:
  // Where the next value goes: the root, the open array's next element or the open object's key.
  nlohmann::json& Slot();

  nlohmann::json root_;
  // The open objects and arrays, innermost last. Only the innermost one grows, so pointers to
  // the others stay valid.
  std::vector<nlohmann::json*> open_;
  std::string key_;
};

// The compact text, appended to a string or fed straight to an FNV-1a hash (hashing/fnv1a.h).
class JsonText final : public JsonOut {
 public:
  // Appends to `*text`.
  explicit JsonText(std::string* text) : text_(text) {}
  // Hashes, from `hash` on (Hash() reads it).
  explicit JsonText(std::uint64_t hash) : hash_(hash) {}

  void BeginObject() override { Open('{'); }
  void EndObject() override { Close('}'); }
  void BeginArray() override { Open('['); }
  void EndArray() override { Close(']'); }
  void Key(std::string_view key) override;
  void String(std::string_view value) override;
  void Int(std::int64_t value) override;
  void Uint(std::uint64_t value) override;
  void Double(double value) override;
  void Bool(bool value) override { Value(value ? "true" : "false"); }
  void Null() override { Value("null"); }
  void Json(const nlohmann::json&, std::string_view text) override { Value(text); }

  std::uint64_t Hash() const { return hash_; }

 private:
  void Put(std::string_view text) {
    if (text_ != nullptr) {
      text_->append(text);
    } else {
      hash_ = hashing::Fnv1a64(text, hash_);
    }
  }
  void Put(char c) { Put(std::string_view(&c, 1)); }
  void Separate();  // the comma before a value or key that is not its container's first
  void Value(std::string_view text) {
    Separate();
    Put(text);
  }
  void Open(char bracket);
  void Close(char bracket);
  void Escaped(std::string_view value);

  std::string* text_ = nullptr;
  std::uint64_t hash_ = 0;
  // Per open container: whether it has no element yet. After a key, its value comes next.
  std::vector<char> empty_;
  bool after_key_ = false;
};

}  // namespace faultline::harness
