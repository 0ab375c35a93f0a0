// inheritParams: index maps child -> parent per element set, then a copy of
// every parameter entry whose indices all map.
#include "core/Inherit.h"

#include <unordered_map>

#include <fmt/format.h>

#include "support/Error.h"

namespace evoc::runtime {

namespace {

// Sizes of every set for a robot with these keys (body sets from the keys,
// derived ones as base + sum(coef * size)).
std::vector<int64_t> sizesOf(const ir::Module &m, const ElementKeys &k) {
  std::vector<int64_t> sizes(m.sets.size(), 0);
  for (size_t s = 0; s < m.sets.size(); ++s) {
    const ir::ElementSet &S = m.sets[s];
    if (!S.fromBody)
      continue;
    if (S.name == "point")
      sizes[s] = int64_t(k.points.size());
    else if (S.name == "spring")
      sizes[s] = int64_t(k.springs.size());
    else
      throw Error("element set '" + S.name +
                  "' is said to come from the body, but a body only has points and springs");
  }
  ir::deriveSetSizes(m, sizes.data());
  return sizes;
}

// Child element -> parent element with the same key, -1 where none (or the
// parent's key is not unique: no way to tell which one is "the same").
std::vector<int64_t> keyMap(const std::vector<uint64_t> &parent,
                            const std::vector<uint64_t> &child) {
  std::unordered_map<uint64_t, int64_t> at;
  for (size_t i = 0; i < parent.size(); ++i) {
    auto [it, fresh] = at.emplace(parent[i], int64_t(i));
    if (!fresh)
      it->second = -1;
  }
  std::vector<int64_t> map(child.size(), -1);
  for (size_t i = 0; i < child.size(); ++i)
    if (auto it = at.find(child[i]); it != at.end())
      map[i] = it->second;
  return map;
}

std::vector<int64_t> identity(int64_t n) {
  std::vector<int64_t> map(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    map[size_t(i)] = i;
  return map;
}

void checkShape(const ParamSet &p, const std::string &key, const std::vector<int64_t> &shape,
                const char *who) {
  auto it = p.find(key);
  if (it == p.end())
    throw Error(fmt::format("the {}'s parameters have no field '{}'", who, key));
  if (it->second.shape != shape || int64_t(it->second.data.size()) != [&] {
        int64_t n = 1;
        for (int64_t d : shape)
          n *= d;
        return n;
      }())
    throw Error(
        fmt::format("the {}'s parameter '{}' does not have the shape its body implies", who, key));
}

} // namespace

ParamSet inheritParams(const ModuleInfo &info, const ParamSet &parent,
                       const ElementKeys &parentKeys, const ElementKeys &childKeys, ParamSet seeded,
                       InheritStats *stats) {
  const ir::Module &m = *info.module;
  const std::vector<int64_t> ps = sizesOf(m, parentKeys), cs = sizesOf(m, childKeys);

  // Per set: child index -> parent index (-1: not shared).
  // Body sets first: a layout's segments refer to them.
  std::vector<std::vector<int64_t>> setMap(m.sets.size());
  for (size_t s = 0; s < m.sets.size(); ++s)
    if (m.sets[s].fromBody)
      setMap[s] = m.sets[s].name == "point" ? keyMap(parentKeys.points, childKeys.points)
                                            : keyMap(parentKeys.springs, childKeys.springs);
  for (size_t s = 0; s < m.sets.size(); ++s) {
    const ir::ElementSet &S = m.sets[s];
    std::vector<int64_t> &map = setMap[s];
    if (S.fromBody) {
      // mapped above
    } else if (!S.layout.empty()) {
      int64_t parentAt = 0; // where the segment starts in the parent's vector
      for (auto [set, count] : S.layout) {
        if (set < 0) {
          for (int64_t c = 0; c < count; ++c)
            map.push_back(parentAt + c);
          parentAt += count;
          continue;
        }
        const std::vector<int64_t> &elem = setMap[size_t(set)];
        for (int64_t e : elem)
          for (int64_t c = 0; c < count; ++c)
            map.push_back(e < 0 ? -1 : parentAt + e * count + c);
        parentAt += ps[size_t(set)] * count;
      }
    } else if (S.terms.empty()) {
      map = identity(cs[s]);
    } else {
      map.assign(size_t(cs[s]), -1);
    }
    if (int64_t(map.size()) != cs[s])
      throw Error("element set '" + S.name + "': its layout does not add up to its size");
  }

  InheritStats st;
  for (size_t b = 0; b < m.buffers.size(); ++b) {
    const ir::Buffer &buf = m.buffers[b];
    if (buf.role != ir::Role::Param)
      continue;
    const std::string key = info.paramKey(int(b));
    const std::vector<int64_t> pshape = bufferShape(buf, ps), cshape = bufferShape(buf, cs);
    checkShape(parent, key, pshape, "parent");
    checkShape(seeded, key, cshape, "child");
    std::vector<const std::vector<int64_t> *> dims;
    std::vector<int64_t> comps;
    for (int s : buf.sets)
      dims.push_back(&setMap[size_t(s)]);
    if (buf.comps > 1) {
      comps = identity(buf.comps);
      dims.push_back(&comps);
    }
    const std::vector<double> &from = parent.at(key).data;
    std::vector<double> &to = seeded.at(key).data;
    st.total += int64_t(to.size());
    // Walk the child's entries row-major with a multi-index.
    const size_t nd = dims.size();
    std::vector<int64_t> idx(nd, 0);
    for (size_t flat = 0; flat < to.size(); ++flat) {
      int64_t src = 0;
      bool shared = true;
      for (size_t d = 0; d < nd && shared; ++d) {
        int64_t p = (*dims[d])[size_t(idx[d])];
        shared = p >= 0;
        src = src * pshape[d] + p;
      }
      if (shared) {
        to[flat] = from[size_t(src)];
        ++st.copied;
      }
      for (size_t d = nd; d-- > 0;)
        if (++idx[d] < cshape[d])
          break;
        else
          idx[d] = 0;
    }
  }
  if (stats)
    *stats = st;
  return seeded;
}

} // namespace evoc::runtime
