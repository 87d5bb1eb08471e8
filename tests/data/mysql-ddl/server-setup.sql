-- Our own set-up script for the schema history's check against a real server: tables of every MySQL
-- column type, composite and changed keys, character sets, odd names, and ALTERs of every kind.
-- Statements end with ";" at the end of a line; "--" lines are comments.

CREATE DATABASE ddl_one;
USE ddl_one;

CREATE TABLE every_type (
    id INT NOT NULL,
    part DECIMAL(3,1) NOT NULL,
    tiny_bool TINYINT(1),
    flag BOOLEAN,
    flag2 BOOL DEFAULT 1,
    bit1 BIT(1),
    bits BIT(12),
    tiny TINYINT,
    tiny_u TINYINT(3) UNSIGNED,
    tiny_uz TINYINT(3) UNSIGNED ZEROFILL,
    small SMALLINT DEFAULT -1,
    small_u SMALLINT UNSIGNED,
    medium MEDIUMINT,
    medium_u MEDIUMINT(7) UNSIGNED ZEROFILL,
    num INT(11),
    num_u INT UNSIGNED,
    big BIGINT,
    big_u BIGINT UNSIGNED,
    big_uz BIGINT(20) UNSIGNED ZEROFILL,
    ser SERIAL,
    f FLOAT,
    f_u FLOAT UNSIGNED,
    f_p FLOAT(6,2),
    r REAL,
    d DOUBLE,
    d_u DOUBLE(12,6) UNSIGNED ZEROFILL,
    dp DOUBLE PRECISION,
    n NUMERIC(9,2),
    fx FIXED(30,4),
    dec_big DECIMAL(42,4),
    dec0 DECIMAL(10),
    dt_date DATE,
    dt DATETIME,
    dt3 DATETIME(3),
    dt6 DATETIME(6),
    ts TIMESTAMP NULL,
    ts6 TIMESTAMP(6) NULL,
    tm TIME,
    tm3 TIME(3),
    yr YEAR,
    c CHAR(12),
    vc VARCHAR(30) CHARACTER SET latin1,
    vc_bin VARCHAR(8) BINARY,
    tt TINYTEXT,
    tx TEXT,
    mt MEDIUMTEXT,
    lt LONGTEXT,
    bn BINARY(6),
    vb VARBINARY(16),
    tb TINYBLOB,
    bl BLOB,
    mb MEDIUMBLOB,
    lb LONGBLOB,
    js JSON,
    en ENUM('red','green','it''s blue'),
    st SET('x','y','o''k'),
    geo GEOMETRY,
    pt POINT,
    ls LINESTRING,
    pg POLYGON,
    mpt MULTIPOINT,
    mls MULTILINESTRING,
    mpg MULTIPOLYGON,
    gc GEOMETRYCOLLECTION,
    PRIMARY KEY (id, part)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE `odd names` (
    `key col` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'the key',
    `a,b` VARCHAR(10) NOT NULL DEFAULT 'q',
    `$% ^` INT,
    note VARCHAR(40) CHARACTER SET latin1 COLLATE latin1_swedish_ci,
    PRIMARY KEY (`key col`),
    KEY by_note (note)
) DEFAULT CHARSET=utf8mb4;

CREATE TABLE reshaped (a INT NOT NULL, b INT, c VARCHAR(5), d DOUBLE, CONSTRAINT pk PRIMARY KEY (a));
ALTER TABLE reshaped ADD COLUMN z INT FIRST, ADD COLUMN y VARCHAR(3) AFTER a;
ALTER TABLE reshaped CHANGE COLUMN b bb BIGINT NOT NULL AFTER c, MODIFY c VARCHAR(50) CHARACTER SET latin1;
ALTER TABLE reshaped RENAME COLUMN bb TO b2, DROP COLUMN z, DROP d;
ALTER TABLE reshaped DROP PRIMARY KEY, ADD PRIMARY KEY (a, b2);
ALTER TABLE reshaped ADD (e DECIMAL(5,3), f SET('p','q'));

CREATE DATABASE ddl_two;
USE ddl_two;

CREATE TABLE keyless (v INT, w TEXT);
CREATE TABLE renamed_from (id INT PRIMARY KEY, v VARCHAR(10));
RENAME TABLE renamed_from TO renamed_to;
CREATE TABLE dropped (id INT PRIMARY KEY);
DROP TABLE dropped;
CREATE TABLE ddl_one.across (id INT NOT NULL, PRIMARY KEY (id));
ALTER TABLE ddl_one.across ADD COLUMN v MEDIUMTEXT;
