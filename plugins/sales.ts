// The demo: customers, products, their orders and order lines, and who may touch them.
// It is the benchmark's model (shared/bench/WORKLOAD.md). Every entity also gets Guid and Title.
import { entity, method, p, plugin, sum, sumOf } from 'entityctl/plugin'

const Customer = entity('Customer', {
  properties: {
    Name: p.properNoun().required().maxLength(100).label('Name').searchable(),
    Email: p.email().label('E-mail').description('Where invoices are sent').searchable(),
    City: p.text().maxLength(60).searchable(),
    Country: p.text().maxLength(2).label('Country').description('ISO 3166-1 alpha-2 code, upper-case'),
    CreditLimit: p.decimal(12, 2).label('Credit limit'),
    Title: p.text().maxLength(100),
    Orders: p.many('Order').via('Customer'),
  },
  corrections: { Country: (code) => (typeof code === 'string' ? code.trim().toUpperCase() : code) },
  computed: { Title: { from: ['Name'], value: (customer) => customer.Name } },
  methods: {
    Revenue: method.read(
      'Sum of the totals of all orders of this customer',
      { returns: p.decimal(14, 2) },
      async (customer, { find }) => sum(await find('Order', { Customer: customer.Guid }), (order) => order.Total),
    ),
  },
})

const Product = entity('Product', {
  naturalKey: ['Code'],
  properties: {
    Code: p.text().required().maxLength(20).label('Product code').searchable(),
    Name: p.properNoun().required().maxLength(100).searchable(),
    Category: p.text().maxLength(40).searchable(),
    Price: p.decimal(12, 2).required().min(0).label('Price'),
    Title: p.text().maxLength(121),
  },
  corrections: { Code: (code) => (typeof code === 'string' ? code.trim().toUpperCase() : code) },
  computed: { Title: { from: ['Code', 'Name'], value: (product) => `${product.Code} ${product.Name}` } },
  methods: {
    Reprice: method.modify(
      'Changes the price of every product of a category by a percentage',
      { static: true, params: { category: p.text().required(), percent: p.decimal(6, 2).required() }, returns: p.integer() },
      async ({ category, percent }, { find }) => {
        const products = await find('Product', { Category: category })
        for (const product of products) product.Price = Math.round(product.Price * (100 + percent)) / 100
        return products.length
      },
    ),
  },
})

const Order = entity('Order', {
  naturalKey: ['Number'],
  properties: {
    Number: p.integer().required().label('Order number'),
    Customer: p.reference('Customer').required().onDelete('restrict'),
    OrderDate: p.date().label('Order date'),
    Status: p.text().oneOf('Open', 'Closed'),
    Total: p.decimal(14, 2).label('Total').description('Sum of the line totals, kept by the rules'),
    Title: p.text().maxLength(30),
    Lines: p.many('OrderLine').via('Order'),
  },
  defaults: { Status: () => 'Open', OrderDate: (_order, { today }) => today },
  computed: {
    Total: sumOf('Lines', 'LineTotal'),
    Title: { from: ['Number'], value: (order) => `Order ${order.Number}` },
  },
  methods: {
    Close: method.modify('Closes the order', (order) => {
      order.Status = 'Closed'
    }),
    OpenSince: method.read(
      'Open orders placed before a date',
      { static: true, params: { before: p.date().required() }, returns: p.many('Order') },
      ({ before }, { find }) => find('Order', { Status: 'Open', OrderDate: { $lt: before } }),
    ),
  },
})

const OrderLine = entity('OrderLine', {
  properties: {
    Order: p.reference('Order').required().onDelete('cascade'),
    Product: p.reference('Product').required().onDelete('restrict'),
    Quantity: p.integer().required().min(1).max(10),
    UnitPrice: p.decimal(12, 2).label('Unit price'),
    LineTotal: p.decimal(14, 2).label('Line total'),
    Title: p.text().maxLength(60),
  },
  defaults: { UnitPrice: (line) => line.Product?.Price },
  computed: {
    LineTotal: { from: ['Quantity', 'UnitPrice'], value: (line) => Math.round(line.Quantity * line.UnitPrice * 100) / 100 },
    Title: { from: ['Order.Title', 'Product.Code'], value: (line) => `${line.Order?.Title} / ${line.Product?.Code}` },
  },
})

export default plugin({
  entities: [Customer, Product, Order, OrderLine],
  responsibilities: {
    TakeOrders: {
      description: 'Enter and change orders for customers',
      permissions: {
        Customer: ['read'],
        Product: ['read'],
        Order: ['read', 'create', 'update'],
        OrderLine: ['read', 'create', 'update', 'delete'],
      },
    },
    CloseOrders: { description: 'Close open orders', permissions: { Order: ['read', 'execute:Close'] } },
    MaintainProducts: {
      description: 'Keep the product catalogue and its prices',
      permissions: { Product: ['read', 'create', 'update', 'delete', 'execute:Reprice'] },
    },
    MaintainCustomers: {
      description: 'Keep customer master data',
      permissions: { Customer: ['read', 'create', 'update', 'delete'] },
    },
    ReadReports: {
      description: 'Read everything, change nothing',
      permissions: {
        Customer: ['read', 'execute:Revenue'],
        Product: ['read'],
        Order: ['read', 'execute:OpenSince'],
        OrderLine: ['read'],
      },
    },
  },
})
