// From HEIR's tests/Examples/plaintext/tensor_extract/tensor_extract.mlir (Apache License 2.0).
func.func @tensor_extract(%arg0: tensor<8xi16> {secret.secret}) -> i16 {
  %c0 = arith.constant 0 : index
  %1 = tensor.extract %arg0[%c0] : tensor<8xi16>
  return %1 : i16
}
