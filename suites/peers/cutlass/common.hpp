// Host-only helpers shared by the CUTLASS peer programs (mmacts suites/peers).
// CuTe computes shared-memory descriptor start addresses through cast_smem_ptr_to_uint, a device
// intrinsic; on the host we let a plain pointer value stand for the shared::cta address.
#pragma once
#include <cstddef>
#include <cstdint>
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1
static inline size_t __cvta_generic_to_shared(const void* p) { return reinterpret_cast<size_t>(p); }
#include <cstdio>
#include <string>
#include <vector>
#include <cute/tensor.hpp>

struct Json {
  std::string s = "{";
  bool first = true;
  Json& key(const char* k) { s += first ? "\"" : ",\""; s += k; s += "\":"; first = false; return *this; }
  Json& str(const char* k, const std::string& v) { key(k); s += "\"" + v + "\""; return *this; }
  Json& num(const char* k, long long v) { key(k); s += std::to_string(v); return *this; }
  Json& u64(const char* k, unsigned long long v) { key(k); s += std::to_string(v); return *this; }
  template <class T> Json& arr(const char* k, const std::vector<T>& v) {
    key(k); s += "[";
    for (size_t i = 0; i < v.size(); ++i) { if (i) s += ","; s += std::to_string(v[i]); }
    s += "]"; return *this;
  }
  void emit() { s += "}"; std::puts(s.c_str()); }
};
