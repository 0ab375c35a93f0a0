// Spellings of AST operators and kinds, and type names for messages.
#include "frontend/AST.h"

namespace evoc::ast {

const char *binaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  }
  return "?";
}

const char *unaryOpSpelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg:
    return "-";
  case UnaryOp::Plus:
    return "+";
  case UnaryOp::Not:
    return "!";
  }
  return "?";
}

const char *fieldKindSpelling(FieldKind k) {
  switch (k) {
  case FieldKind::State:
    return "state";
  case FieldKind::Temp:
    return "temp";
  case FieldKind::Body:
    return "body";
  case FieldKind::Param:
    return "param";
  case FieldKind::Input:
    return "input";
  }
  return "?";
}

const char *builtinName(Builtin b) {
  switch (b) {
  case Builtin::None:
    return "<none>";
  case Builtin::Norm:
    return "norm";
  case Builtin::Dot:
    return "dot";
  case Builtin::Clamp:
    return "clamp";
  case Builtin::Abs:
    return "abs";
  case Builtin::Min:
    return "min";
  case Builtin::Max:
    return "max";
  case Builtin::Exp:
    return "exp";
  case Builtin::Log:
    return "log";
  case Builtin::Sin:
    return "sin";
  case Builtin::Cos:
    return "cos";
  case Builtin::Tanh:
    return "tanh";
  case Builtin::Sqrt:
    return "sqrt";
  case Builtin::Pow:
    return "pow";
  case Builtin::Floor:
    return "floor";
  case Builtin::Vec2:
    return "vec2";
  case Builtin::Vec3:
    return "vec3";
  case Builtin::Mat2:
    return "mat2";
  case Builtin::Mat3:
    return "mat3";
  case Builtin::Transpose:
    return "transpose";
  case Builtin::Det:
    return "det";
  case Builtin::Trace:
    return "trace";
  case Builtin::Outer:
    return "outer";
  case Builtin::PolarRotation:
    return "polar_rotation";
  case Builtin::Sum:
    return "sum";
  case Builtin::Mean:
    return "mean";
  case Builtin::ReduceMin:
    return "min";
  case Builtin::ReduceMax:
    return "max";
  case Builtin::SinWaves:
    return "sin_waves";
  case Builtin::Repeat:
    return "repeat";
  case Builtin::GroundHeight:
    return "ground_height";
  case Builtin::GroundNormal:
    return "ground_normal";
  case Builtin::GroundGap:
    return "ground_gap";
  case Builtin::GroundSpeed:
    return "ground_speed";
  case Builtin::InContact:
    return "in_contact";
  case Builtin::ContactNormal:
    return "contact_normal";
  case Builtin::ContactGap:
    return "contact_gap";
  case Builtin::ContactSpeed:
    return "contact_speed";
  case Builtin::PushOut:
    return "push_out";
  case Builtin::PartMean:
    return "part_mean";
  }
  return "?";
}

std::string typeToString(const Type &t) {
  std::string base;
  switch (t.kind) {
  case TypeKind::Error:
    return "<error>";
  case TypeKind::Void:
    return "void";
  case TypeKind::Bool:
    base = "bool";
    break;
  case TypeKind::Int:
    base = "int";
    break;
  case TypeKind::Scalar:
    base = "scalar";
    break;
  case TypeKind::Vec:
    base = "vec" + std::to_string(t.width);
    break;
  case TypeKind::Mat:
    base = "mat" + std::to_string(t.width);
    break;
  case TypeKind::Element:
    return "element of '" + (t.set ? t.set->name.name : std::string("?")) + "'";
  case TypeKind::Set:
    return "set '" + (t.set ? t.set->name.name : std::string("?")) + "'";
  case TypeKind::World:
    return "world settings";
  case TypeKind::String:
    return "string";
  case TypeKind::Tuple:
    return "tuple";
  case TypeKind::List:
    return "list";
  }
  if (t.set)
    return "field<" + t.set->name.name + ", " + base + ">";
  return base;
}

} // namespace evoc::ast
