-- The sample database of the compose stack (mounted into MySQL's /docker-entrypoint-initdb.d).
CREATE DATABASE IF NOT EXISTS shop;
USE shop;
CREATE TABLE customers (
  id INT PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  city VARCHAR(64),
  created_at DATETIME(3) NOT NULL
);
CREATE TABLE orders (
  id BIGINT PRIMARY KEY AUTO_INCREMENT,
  customer_id INT NOT NULL,
  amount DECIMAL(12, 2) NOT NULL,
  status VARCHAR(16) NOT NULL,
  updated_at DATETIME(3) NOT NULL
);
INSERT INTO customers VALUES
  (1, 'Ada', 'London', '2024-01-01 09:00:00.000'),
  (2, 'Grace', 'New York', '2024-01-01 09:05:00.000'),
  (3, 'Edsger', 'Eindhoven', '2024-01-01 09:10:00.000'),
  (4, 'Barbara', 'Boston', '2024-01-01 09:15:00.000');
INSERT INTO orders (customer_id, amount, status, updated_at) VALUES
  (1, 12.50, 'new', '2024-01-01 10:00:00.000'),
  (2, 99.00, 'paid', '2024-01-01 10:01:00.000'),
  (3, 7.25, 'new', '2024-01-01 10:02:00.000');
