const verification = { merchantId: '4830175925', merchantKey: 'mk_…' };
const envelope = (op: Record<string, unknown>) => ({ 'transaction-request': { version: '1.0.0', verification, ...op } });

const payment = {
  acquirer: 26,
  method: 1,
  amount: 150000,
  currency: '986',
  country: 'BRA',
  numberOfPayments: 1,
  flag: 'visa',
  cardHolder: 'MARIA SILVA',
  cardNumber: '4111111111111111',
  cardSecurityCode: '123',
  cardExpirationDate: '203012',
  generateToken: 'true',
  softDescriptor: 'SHOP',
};

export const ReceiverExamples = {
  sale: { summary: 'sale with an inline card', value: envelope({ sale: { order: { reference: 'A-1001', totalAmount: 150000 }, payment, urlReturn: 'https://merchant.example/listener', fraud: 'false' } }) },
  saleWithToken: {
    summary: 'sale with a token (numbers as JSON numbers)',
    value: envelope({ sale: { order: { reference: 'A-1002', totalAmount: 9990 }, payment: { acquirer: 26, method: 1, amount: 9990, currency: 986, country: 'BRA', numberOfPayments: 1, tokenCard: '3b1f…64 hex' }, fraud: true } }),
  },
  authorize: { summary: 'authorize only (capture later)', value: envelope({ authorize: { order: { reference: 'A-1003', totalAmount: 150000 }, payment } }) },
  capture: { summary: 'capture, partial when amount is given', value: envelope({ capture: { transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A', amount: 100000 } }) },
  cancel: { summary: 'cancel, partial when amount is given', value: envelope({ cancel: { transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A', amount: 50000 } }) },
  report: { summary: 'report by transaction id', value: envelope({ report: { transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A' } }) },
  reportByReference: { summary: "report by reference (the merchant's latest)", value: envelope({ report: { reference: 'A-1001' } }) },
  saleWithSplit: {
    summary: 'sale split between two approved recipients (SPLIT.md)',
    value: envelope({
      sale: {
        order: { reference: 'A-1004', totalAmount: 12345 },
        payment: {
          ...payment, amount: 12345, flag: 'mastercard', cardNumber: '5555555555554444',
          split: [
            { recipient: '0b6f5c3e-6a4d-4f0e-9a1b-2c3d4e5f6a7b', percentage: '33.33', charge_processing_fee: 'true', liable: 'true' },
            { recipient: '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f', amount: 1000, charge_recipient_processing_fee: false, liable: false },
          ],
        },
        fraud: 'false',
      },
    }),
  },
};

export const TransactionResponseSchema = {
  type: 'object',
  example: {
    transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
    operationId: '3',
    status: '8',
    message: 'APPROVED',
    errorCode: '',
    statusVersion: '2',
    order: { reference: 'A-1001', currency: '986', totalAmount: '150000', dateTime: '2026-11-22T15:12:14.794Z' },
    processor: { acquirer: '26', tid: '…', nsu: '…', authorizationCode: '…', returnCode: '00', returnMessage: 'Approved', numberOfPayments: '1', amount: '150000', capturedAmount: '150000', cancelledAmount: '0' },
    tokenCard: '',
    split: [{ recipient: '0b6f5c3e-6a4d-4f0e-9a1b-2c3d4e5f6a7b', grossAmount: '50000', feeAmount: '1495', netAmount: '48505', mode: 'PRORATA', liable: 'true' }],
    splitResidual: { grossAmount: '100000', feeAmount: '2990', netAmount: '97010' },
    processingFee: '4485',
    payables: [{ party: 'merchant', kind: 'capture', instalment: '1', dueDate: '2026-12-22', gross: '100000', fee: '2990', net: '97010', status: 'pending' }],
  },
  description: 'split, splitResidual and processingFee are in cents; payables appear in report once settlement has written them.',
};
