// A command's own options as one table (OptionTable.h).
#include "support/OptionTable.h"

#include <cstdio>
#include <memory>

#include "support/Error.h"

namespace evoc {

OptionTable &OptionTable::flag(const std::string &name, bool &dst) {
  options_.push_back({name, false, [&dst](const std::string &) {
                        dst = true;
                        return std::string();
                      }});
  return *this;
}

OptionTable &OptionTable::text(const std::string &name, std::string &dst) {
  return custom(name, [&dst](const std::string &v) {
    dst = v;
    return std::string();
  });
}

OptionTable &OptionTable::integer(const std::string &name, int64_t lo, int64_t hi, int64_t &dst,
                                  const std::string &note) {
  return custom(name, [name, lo, hi, note, &dst](const std::string &v) {
    // Digits only, range checked before conversion: no overflow, no "1e3"
    // read as 1, no silent default.
    const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
    int64_t n = -1;
    if (digits)
      n = v.size() > 18 ? hi + 1 : std::stoll(v); // more digits: out of any range here
    if (!digits || n < lo || n > hi)
      return name + " expects an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
             note + ", got '" + v + "'";
    dst = n;
    return std::string();
  });
}

OptionTable &OptionTable::integer(const std::string &name, int64_t lo, int64_t hi, int &dst,
                                  const std::string &note) {
  EVOC_ASSERT(lo >= INT32_MIN && hi <= INT32_MAX, "OptionTable: an int option's range");
  auto wide = std::make_shared<int64_t>(0);
  integer(name, lo, hi, *wide, note);
  auto check = std::move(options_.back().set);
  options_.back().set = [check, wide, &dst](const std::string &v) {
    std::string why = check(v);
    if (why.empty())
      dst = int(*wide);
    return why;
  };
  return *this;
}

OptionTable &OptionTable::custom(const std::string &name,
                                 std::function<std::string(const std::string &)> set) {
  options_.push_back({name, true, std::move(set)});
  return *this;
}

OptionTable &OptionTable::alias(const std::string &name, const std::string &target) {
  const Option *t = find(target);
  EVOC_ASSERT(t, "OptionTable: an alias of an option not in the table");
  Option o = *t;
  o.name = name;
  options_.push_back(std::move(o));
  return *this;
}

OptionTable &OptionTable::positionals(std::vector<std::string> &dst) {
  positionals_ = &dst;
  return *this;
}

const OptionTable::Option *OptionTable::find(const std::string &name) const {
  for (const Option &o : options_)
    if (o.name == name)
      return &o;
  return nullptr;
}

bool OptionTable::error(const std::string &message) const {
  std::fprintf(stderr, "%s: error: %s\n", command_.c_str(), message.c_str());
  return false;
}

bool OptionTable::parse(const std::vector<std::string> &args) const {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      if (!positionals_)
        return error("unexpected argument '" + a + "'");
      positionals_->push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const Option *o = find(name);
    if (!o)
      return error("unknown option '" + name + "'");
    std::string value;
    if (eq != std::string::npos) {
      if (!o->takesValue)
        return error(name + " takes no value");
      value = a.substr(eq + 1);
    } else if (o->takesValue) {
      if (i + 1 >= args.size())
        return error(name + " needs a value");
      value = args[++i];
    }
    if (std::string why = o->set(value); !why.empty())
      return error(why);
  }
  return true;
}

} // namespace evoc
